using System;
using System.Threading.Tasks;
using UnityEngine;

namespace StarHarness.Client
{
    /// <summary>
    /// Talks to a star-harness server over the frame protocol v1. Add it to one GameObject,
    /// subscribe to the On* events (raised on the main thread, from Update) and call the send
    /// helpers. The harness owns the world: render frames, never apply them.
    /// </summary>
    public class StarHarnessClient : MonoBehaviour
    {
        [SerializeField] string url = "ws://127.0.0.1:3099/gh";
        [SerializeField] string playerId = "player-1";
        [SerializeField] bool connectOnStart = true;
        [Tooltip("Environment variable holding the auth token, for a server that needs one.")]
        [SerializeField] string tokenEnvironmentVariable = "";
        [Tooltip("Most frames handled per Update, so a burst never stalls a frame.")]
        [SerializeField] int maxFramesPerUpdate = 256;

        public event Action<WelcomeFrame> OnWelcome;
        public event Action<EncounterOpenedFrame> OnEncounterOpened;
        public event Action<SayDeltaFrame> OnSayDelta;
        public event Action<SayEndFrame> OnSayEnd;
        public event Action<OptionsFrame> OnOptions;
        public event Action<ActionFrame> OnAction;
        public event Action<EncounterIdleFrame> OnEncounterIdle;
        /// <summary>Who is in a shared scene now (a player joined or left).</summary>
        public event Action<ScenePlayersFrame> OnScenePlayers;
        public event Action<ErrorFrame> OnError;
        public event Action<WorldEventFrame> OnWorldEvent;
        public event Action<HudFrame> OnHud;
        /// <summary>The socket is open and hello was sent.</summary>
        public event Action OnConnected;
        /// <summary>The socket closed (code, reason); encounters are gone, a reconnect follows.</summary>
        public event Action<int, string> OnDisconnected;
        /// <summary>A frame whose `t` this client does not know (a newer server), as raw text.</summary>
        public event Action<string, string> OnUnknownFrame;

        FrameSocket _socket;
        int _encountersOpened;

        /// <summary>The protocol revision whose scenes several players share (OpenScene join).</summary>
        public const int SharedScenesRevision = 3;

        public string PlayerId { get { return playerId; } }
        /// <summary>The server's protocol revision, from its welcome (1 until then).</summary>
        public int Revision { get; private set; } = 1;
        public bool IsConnected { get { return _socket != null && _socket.IsOpen; } }

        void Start()
        {
            if (connectOnStart) Connect();
        }

        void Update()
        {
            if (_socket == null) return;
            Inbound item;
            // A handler may call Disconnect(), so check the socket before every item.
            for (int i = 0; i < maxFramesPerUpdate && _socket != null
                            && _socket.Inbox.TryDequeue(out item); i++)
                Handle(item);
        }

        void OnDestroy()
        {
            Disconnect();
        }

        /// <summary>Connect (or reconnect) to the configured URL as the configured player.</summary>
        public void Connect()
        {
#if UNITY_WEBGL && !UNITY_EDITOR
            Debug.LogError("star-harness: System.Net.WebSockets does not work in WebGL builds; "
                           + "use the browser WebSocket through a .jslib bridge (see README).");
            return;
#else
            Disconnect();
            string token = string.IsNullOrEmpty(tokenEnvironmentVariable)
                ? null : Environment.GetEnvironmentVariable(tokenEnvironmentVariable);
            _socket = new FrameSocket(new Uri(url), playerId, token);
            _socket.Start();
#endif
        }

        /// <summary>Close the socket and stop reconnecting.</summary>
        public void Disconnect()
        {
            if (_socket == null) return;
            _socket.Dispose();
            _socket = null;
        }

        /// <summary>Walk up to an NPC; returns the new encounter id.</summary>
        public string OpenEncounter(string npcId)
        {
            _encountersOpened++;
            string encounterId = "enc-" + _encountersOpened;
            Send(UpFrames.Open(encounterId, npcId, playerId));
            return encounterId;
        }

        /// <summary>Walk up to several NPCs at once (1 to 4 ids, in one place): one scene whose
        /// frames name their speaker in SpeakerId; npcIds[0] holds the floor first. On a server
        /// of Revision 3 or more the scene is shared: other players at the place who open one with
        /// the same NPCs are in it, and their lines carry SayDeltaFrame.SpeakerName. Returns the
        /// new encounter id.</summary>
        public string OpenScene(System.Collections.Generic.IList<string> npcIds)
        {
            if (npcIds == null || npcIds.Count == 0) throw new ArgumentException("name at least one NPC");
            _encountersOpened++;
            string encounterId = "enc-" + _encountersOpened;
            Send(UpFrames.OpenScene(encounterId, npcIds, playerId, Revision >= SharedScenesRevision));
            return encounterId;
        }

        /// <summary>In a scene: say free text to one of its NPCs (by id).</summary>
        public void SayTo(string encounterId, string npcId, string text)
        {
            Send(UpFrames.SayTo(encounterId, npcId, text));
        }

        /// <summary>Say free text; wait for OnEncounterIdle first or get error "busy".</summary>
        public void Say(string encounterId, string text)
        {
            Send(UpFrames.Say(encounterId, text));
        }

        /// <summary>Pick an item of the encounter's last OnOptions by its Id.</summary>
        public void SayOption(string encounterId, string optionId)
        {
            Send(UpFrames.SayOption(encounterId, optionId));
        }

        /// <summary>Walk away; a running turn is cancelled, committed actions stay.</summary>
        public void CloseEncounter(string encounterId)
        {
            Send(UpFrames.Close(encounterId));
        }

        /// <summary>Advance the world clock; OnWorldEvent follows.</summary>
        public void Tick(int days)
        {
            Send(UpFrames.Tick(days));
        }

        /// <summary>Send any frame's JSON text without waiting (never block the main thread).</summary>
        public void Send(string json)
        {
            if (_socket == null || !_socket.IsOpen)
            {
                Debug.LogWarning("star-harness: not connected, frame dropped: " + json);
                return;
            }
            _socket.SendAsync(json).ContinueWith(LogFailedSend, TaskContinuationOptions.OnlyOnFaulted);
        }

        static void LogFailedSend(Task<bool> send)
        {
            Debug.LogWarning("star-harness: send failed: " + send.Exception);
        }

        void Handle(Inbound item)
        {
            switch (item.Kind)
            {
                case Inbound.Kinds.Frame:
                    Dispatch(item.Text);
                    break;
                case Inbound.Kinds.Connected:
                    if (OnConnected != null) OnConnected();
                    break;
                case Inbound.Kinds.Disconnected:
                    if (OnDisconnected != null) OnDisconnected(item.CloseCode, item.Text);
                    break;
                case Inbound.Kinds.Problem:
                    Debug.LogWarning("star-harness: " + item.Text + " (" + url + ")");
                    break;
            }
        }

        /// <summary>The welcome, after noting the server's revision (it decides OpenScene's join).</summary>
        WelcomeFrame Welcomed(System.Collections.Generic.Dictionary<string, object> f)
        {
            var welcome = FrameReader.Welcome(f);
            Revision = welcome.Revision;
            return welcome;
        }

        void Dispatch(string text)
        {
            System.Collections.Generic.Dictionary<string, object> f;
            string type;
            try
            {
                f = FrameReader.ParseObject(text, out type);
            }
            catch (FormatException e)
            {
                Debug.LogWarning("star-harness: ignored an unreadable frame: " + e.Message);
                return;
            }
            switch (type)
            {
                case "welcome": Raise(OnWelcome, Welcomed(f)); break;
                case "encounter.opened": Raise(OnEncounterOpened, FrameReader.EncounterOpened(f)); break;
                case "say.delta": Raise(OnSayDelta, FrameReader.SayDelta(f)); break;
                case "say.end": Raise(OnSayEnd, FrameReader.SayEnd(f)); break;
                case "options": Raise(OnOptions, FrameReader.Options(f)); break;
                case "action": Raise(OnAction, FrameReader.Action(f)); break;
                case "encounter.idle": Raise(OnEncounterIdle, FrameReader.EncounterIdle(f)); break;
                case "scene.players": Raise(OnScenePlayers, FrameReader.ScenePlayers(f)); break;
                case "error": Raise(OnError, FrameReader.Error(f)); break;
                case "world.event": Raise(OnWorldEvent, FrameReader.WorldEvent(f)); break;
                case "hud": Raise(OnHud, FrameReader.Hud(f)); break;
                default:
                    if (OnUnknownFrame != null) OnUnknownFrame(type, text);
                    break;
            }
        }

        static void Raise<T>(Action<T> handler, T frame)
        {
            if (handler == null) return;
            foreach (Action<T> subscriber in handler.GetInvocationList())
            {
                try
                {
                    subscriber(frame);
                }
                catch (Exception e)
                {
                    // One faulty subscriber must not stop the others, nor the frames after it.
                    Debug.LogException(e);
                }
            }
        }
    }
}
