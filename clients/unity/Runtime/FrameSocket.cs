using System;
using System.Collections.Concurrent;
using System.IO;
using System.Net.WebSockets;
using System.Text;
using System.Threading;
using System.Threading.Tasks;

namespace StarHarness.Client
{
    /// <summary>What the socket's background loop hands to the main thread.</summary>
    public sealed class Inbound
    {
        public enum Kinds { Frame, Connected, Disconnected, Problem }

        public Kinds Kind;
        /// <summary>Frame text, or what went wrong.</summary>
        public string Text;
        public int CloseCode;

        public static Inbound Of(Kinds kind, string text, int closeCode = 0)
        {
            return new Inbound { Kind = kind, Text = text, CloseCode = closeCode };
        }
    }

    /// <summary>
    /// A ClientWebSocket that stays connected: a background loop connects, sends hello, reads
    /// whole messages into Inbox and reconnects with exponential backoff. Nothing here touches
    /// Unity: the MonoBehaviour drains Inbox on the main thread.
    /// </summary>
    public sealed class FrameSocket : IDisposable
    {
        public const int MaxFrameBytes = 16 * 1024 * 1024;
        const int ReceiveBufferBytes = 8192;
        const int FirstBackoffMs = 500;
        const int MaxBackoffMs = 15000;
        const int ConnectTimeoutMs = 5000;

        /// <summary>Frames and connection changes, in arrival order; drain it on the main thread.</summary>
        public readonly ConcurrentQueue<Inbound> Inbox = new ConcurrentQueue<Inbound>();

        readonly Uri _uri;
        readonly string _playerId;
        readonly string _token;
        // ClientWebSocket allows one SendAsync at a time; calls from any thread take turns.
        readonly SemaphoreSlim _sendTurn = new SemaphoreSlim(1, 1);
        readonly CancellationTokenSource _stop = new CancellationTokenSource();
        volatile ClientWebSocket _open;
        Task _loop;

        public FrameSocket(Uri uri, string playerId, string token)
        {
            _uri = uri;
            _playerId = playerId;
            _token = token;
        }

        public bool IsOpen { get { return _open != null; } }

        /// <summary>Start the connect/receive/reconnect loop on the thread pool.</summary>
        public void Start()
        {
            if (_loop != null) return;
            // Task.Run leaves Unity's SynchronizationContext, so awaits never resume on (and
            // never stall) the main thread.
            _loop = Task.Run(() => RunAsync(_stop.Token));
        }

        /// <summary>Send one frame's JSON text; false when not connected (the frame is dropped).</summary>
        public async Task<bool> SendAsync(string json)
        {
            var socket = _open;
            if (socket == null) return false;
            byte[] bytes = Encoding.UTF8.GetBytes(json);
            await _sendTurn.WaitAsync(_stop.Token).ConfigureAwait(false);
            try
            {
                await socket.SendAsync(new ArraySegment<byte>(bytes), WebSocketMessageType.Text, true,
                                       _stop.Token).ConfigureAwait(false);
                return true;
            }
            catch (WebSocketException)
            {
                return false; // the receive loop notices the broken socket and reconnects
            }
            finally
            {
                _sendTurn.Release();
            }
        }

        /// <summary>Stop reconnecting and close the socket.</summary>
        public void Dispose()
        {
            _stop.Cancel();
            var socket = _open;
            if (socket != null) socket.Abort();
        }

        async Task RunAsync(CancellationToken stop)
        {
            int backoffMs = FirstBackoffMs;
            while (!stop.IsCancellationRequested)
            {
                bool opened = false;
                using (var socket = new ClientWebSocket())
                {
                    try
                    {
                        if (!string.IsNullOrEmpty(_token))
                            socket.Options.SetRequestHeader("Authorization", "Bearer " + _token);
                        await ConnectAsync(socket, stop).ConfigureAwait(false);
                        opened = true;
                        backoffMs = FirstBackoffMs;
                        _open = socket;
                        if (!string.IsNullOrEmpty(_playerId))
                            await SendAsync(UpFrames.Hello(_playerId)).ConfigureAwait(false);
                        Inbox.Enqueue(Inbound.Of(Inbound.Kinds.Connected, _uri.ToString()));
                        await ReceiveAsync(socket, stop).ConfigureAwait(false);
                    }
                    catch (OperationCanceledException)
                    {
                        if (stop.IsCancellationRequested) return;
                        Inbox.Enqueue(Inbound.Of(Inbound.Kinds.Problem, "connect timed out"));
                    }
                    catch (Exception e)
                    {
                        if (stop.IsCancellationRequested) return;
                        // Refused, reset, bad URL or a torn socket: report it and try again.
                        Inbox.Enqueue(Inbound.Of(Inbound.Kinds.Problem, e.Message));
                    }
                    finally
                    {
                        _open = null;
                    }
                    if (opened)
                    {
                        int code = socket.CloseStatus.HasValue ? (int)socket.CloseStatus.Value : 1006;
                        Inbox.Enqueue(Inbound.Of(Inbound.Kinds.Disconnected,
                                                 socket.CloseStatusDescription ?? "", code));
                    }
                }
                try
                {
                    await Task.Delay(backoffMs, stop).ConfigureAwait(false);
                }
                catch (OperationCanceledException)
                {
                    return;
                }
                backoffMs = Math.Min(backoffMs * 2, MaxBackoffMs);
            }
        }

        async Task ConnectAsync(ClientWebSocket socket, CancellationToken stop)
        {
            using (var timeout = CancellationTokenSource.CreateLinkedTokenSource(stop))
            {
                timeout.CancelAfter(ConnectTimeoutMs);
                await socket.ConnectAsync(_uri, timeout.Token).ConfigureAwait(false);
            }
        }

        async Task ReceiveAsync(ClientWebSocket socket, CancellationToken stop)
        {
            var buffer = new byte[ReceiveBufferBytes];
            var message = new MemoryStream();
            while (socket.State == WebSocketState.Open)
            {
                // One frame may arrive in many pieces: read until EndOfMessage, then decode the
                // whole message (a UTF-8 character can be split between two pieces).
                message.SetLength(0);
                WebSocketReceiveResult piece;
                do
                {
                    piece = await socket.ReceiveAsync(new ArraySegment<byte>(buffer), stop)
                                        .ConfigureAwait(false);
                    if (piece.MessageType == WebSocketMessageType.Close)
                    {
                        await socket.CloseOutputAsync(WebSocketCloseStatus.NormalClosure, "",
                                                      stop).ConfigureAwait(false);
                        return;
                    }
                    if (message.Length + piece.Count > MaxFrameBytes)
                    {
                        await socket.CloseOutputAsync(WebSocketCloseStatus.MessageTooBig,
                                                      "frame too large", stop).ConfigureAwait(false);
                        return;
                    }
                    message.Write(buffer, 0, piece.Count);
                } while (!piece.EndOfMessage);
                string text = Encoding.UTF8.GetString(message.GetBuffer(), 0, (int)message.Length);
                Inbox.Enqueue(Inbound.Of(Inbound.Kinds.Frame, text));
            }
        }
    }
}
