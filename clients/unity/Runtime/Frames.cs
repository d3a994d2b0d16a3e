using System;
using System.Collections.Generic;

namespace StarHarness.Client
{
    // One class per down frame of protocol v1 (docs/protocol.md, docs/frames.schema.json).
    // Fields mirror the wire names in PascalCase. HUD payloads are game-defined, so they stay
    // generic dictionaries (values: string, double, bool, null, Dictionary, List).
    // In a scene (several NPCs in one encounter, OpenScene) every frame that speaks names its
    // NPC in SpeakerId; outside a scene SpeakerId is null. In a shared scene (revision 3,
    // OpenScene with join) another player's line has their id in SpeakerId and their name in
    // SayDeltaFrame.SpeakerName.

    /// <summary>One NPC the player can walk up to.</summary>
    public sealed class NpcEntry
    {
        public string Id;
        public string Name;
        public string LocationId;
    }

    /// <summary>
    /// What makes an option an offer: accepting it commits Action, a game action that takes
    /// Cost (the game's words for what the player gives, "3,300 cr"; may be empty).
    /// </summary>
    public sealed class OfferTerms
    {
        public string Action;
        public string Cost;
    }

    /// <summary>
    /// One reply the player can pick; send Id back with SayOption. Offer is null for an ordinary
    /// reply; for an offer the NPC proposed, picking it accepts the trade (an `action` frame
    /// follows before the NPC speaks), so show it apart with its Cost and an Accept button.
    /// </summary>
    public sealed class OptionItem
    {
        public string Id;
        public string Label;
        public OfferTerms Offer;

        public bool IsOffer
        {
            get { return Offer != null; }
        }
    }

    /// <summary>One NPC of a scene, as `encounter.opened` lists them.</summary>
    public sealed class SceneNpc
    {
        public string Id;
        public string Name;
        public int Attitude;
    }

    /// <summary>`welcome`: answers hello with the protocol version, HUD and NPCs.</summary>
    public sealed class WelcomeFrame
    {
        public int Protocol;
        /// <summary>The additions of the protocol the server speaks (2: scenes, 3: scenes
        /// several players share); 1 when the server names none.</summary>
        public int Revision;
        public Dictionary<string, object> Hud;
        public List<NpcEntry> Npcs;
    }

    /// <summary>`encounter.opened`: show the NPC at once, before any line arrives.</summary>
    public sealed class EncounterOpenedFrame
    {
        public string Id;
        public string NpcName;
        public int Attitude;
        /// <summary>In a scene: the NPC who holds the floor first.</summary>
        public string SpeakerId;
        /// <summary>In a scene: every NPC in it; null outside a scene.</summary>
        public List<SceneNpc> Npcs;
    }

    /// <summary>`say.delta`: append Text to the line of SpeakerId (in a scene) or the NPC.</summary>
    public sealed class SayDeltaFrame
    {
        public string Id;
        public string Text;
        public string SpeakerId;
        /// <summary>In a shared scene: the name of the other player whose line this is (show it
        /// apart from the NPCs'); null for an NPC's line.</summary>
        public string SpeakerName;
    }

    /// <summary>`say.end`: the line is complete; Mood is one of the game's moods.</summary>
    public sealed class SayEndFrame
    {
        public string Id;
        public string Mood;
        public string SpeakerId;
    }

    /// <summary>`options`: replaces earlier options; empty means free text only. In a scene
    /// they are lines to SpeakerId.</summary>
    public sealed class OptionsFrame
    {
        public string Id;
        public List<OptionItem> Items;
        public string SpeakerId;
    }

    /// <summary>`action`: presentation only, already committed (Ok false: refused).</summary>
    public sealed class ActionFrame
    {
        public string Id;
        public string Name;
        public bool Ok;
        public string Summary;
        public string SpeakerId;
    }

    /// <summary>`encounter.idle`: the turn is over; accept input again.</summary>
    public sealed class EncounterIdleFrame
    {
        public string Id;
    }

    /// <summary>One player of a shared scene, as `scene.players` lists them.</summary>
    public sealed class ScenePlayer
    {
        public string Id;
        public string Name;
    }

    /// <summary>`scene.players` (revision 3): who is in a shared scene now, the player among
    /// them; sent when a player joins or leaves. Compare with the last to say who came or went.</summary>
    public sealed class ScenePlayersFrame
    {
        public string Id;
        public List<ScenePlayer> Players;
    }

    /// <summary>`error`: Id is null when no encounter is concerned; Code is a closed set.</summary>
    public sealed class ErrorFrame
    {
        public string Id;
        public string Code;
        public string Message;
    }

    /// <summary>`world.event`: news for a ticker.</summary>
    public sealed class WorldEventFrame
    {
        public string LocationId;
        public string Headline;
    }

    /// <summary>`hud`: replace the whole HUD of PlayerId with Data.</summary>
    public sealed class HudFrame
    {
        public string PlayerId;
        public Dictionary<string, object> Data;
    }

    /// <summary>Builds frame objects from parsed JSON; missing fields get empty values.</summary>
    public static class FrameReader
    {
        /// <summary>Parse frame text into its `t` and a JSON object; FormatException if it is not one.</summary>
        public static Dictionary<string, object> ParseObject(string text, out string type)
        {
            var frame = Json.Parse(text) as Dictionary<string, object>;
            if (frame == null) throw new FormatException("a frame must be a JSON object");
            type = Str(frame, "t");
            return frame;
        }

        public static WelcomeFrame Welcome(Dictionary<string, object> f)
        {
            var npcs = new List<NpcEntry>();
            foreach (var item in List(f, "npcs"))
            {
                var npc = item as Dictionary<string, object>;
                if (npc == null) continue;
                npcs.Add(new NpcEntry
                {
                    Id = Str(npc, "id"), Name = Str(npc, "name"), LocationId = Str(npc, "locationId")
                });
            }
            int revision = f.ContainsKey("revision") ? Int(f, "revision") : 1;
            return new WelcomeFrame
            {
                Protocol = Int(f, "protocol"), Revision = revision, Hud = Obj(f, "hud"), Npcs = npcs
            };
        }

        public static EncounterOpenedFrame EncounterOpened(Dictionary<string, object> f)
        {
            List<SceneNpc> npcs = null;
            object listed;
            if (f.TryGetValue("npcs", out listed) && listed is List<object>)
            {
                npcs = new List<SceneNpc>();
                foreach (var item in (List<object>)listed)
                {
                    var npc = item as Dictionary<string, object>;
                    if (npc == null) continue;
                    npcs.Add(new SceneNpc
                    {
                        Id = Str(npc, "id"), Name = Str(npc, "name"), Attitude = Int(npc, "attitude")
                    });
                }
            }
            return new EncounterOpenedFrame
            {
                Id = Str(f, "id"), NpcName = Str(f, "npcName"), Attitude = Int(f, "attitude"),
                SpeakerId = Speaker(f), Npcs = npcs
            };
        }

        public static SayDeltaFrame SayDelta(Dictionary<string, object> f)
        {
            object name;
            return new SayDeltaFrame
            {
                Id = Str(f, "id"), Text = Str(f, "text"), SpeakerId = Speaker(f),
                SpeakerName = f.TryGetValue("speakerName", out name) ? name as string : null
            };
        }

        public static SayEndFrame SayEnd(Dictionary<string, object> f)
        {
            return new SayEndFrame { Id = Str(f, "id"), Mood = Str(f, "mood"), SpeakerId = Speaker(f) };
        }

        public static OptionsFrame Options(Dictionary<string, object> f)
        {
            var items = new List<OptionItem>();
            foreach (var item in List(f, "items"))
            {
                var option = item as Dictionary<string, object>;
                if (option == null) continue;
                items.Add(new OptionItem
                {
                    Id = Str(option, "id"), Label = Str(option, "label"), Offer = Offer(option)
                });
            }
            return new OptionsFrame { Id = Str(f, "id"), Items = items, SpeakerId = Speaker(f) };
        }

        public static ActionFrame Action(Dictionary<string, object> f)
        {
            return new ActionFrame
            {
                Id = Str(f, "id"), Name = Str(f, "name"), Ok = Bool(f, "ok"), Summary = Str(f, "summary"),
                SpeakerId = Speaker(f)
            };
        }

        public static EncounterIdleFrame EncounterIdle(Dictionary<string, object> f)
        {
            return new EncounterIdleFrame { Id = Str(f, "id") };
        }

        public static ScenePlayersFrame ScenePlayers(Dictionary<string, object> f)
        {
            var players = new List<ScenePlayer>();
            foreach (var item in List(f, "players"))
            {
                var player = item as Dictionary<string, object>;
                if (player == null) continue;
                players.Add(new ScenePlayer { Id = Str(player, "id"), Name = Str(player, "name") });
            }
            return new ScenePlayersFrame { Id = Str(f, "id"), Players = players };
        }

        public static ErrorFrame Error(Dictionary<string, object> f)
        {
            object id;
            return new ErrorFrame
            {
                Id = f.TryGetValue("id", out id) ? id as string : null,
                Code = Str(f, "code"),
                Message = Str(f, "message")
            };
        }

        public static WorldEventFrame WorldEvent(Dictionary<string, object> f)
        {
            return new WorldEventFrame { LocationId = Str(f, "locationId"), Headline = Str(f, "headline") };
        }

        public static HudFrame Hud(Dictionary<string, object> f)
        {
            return new HudFrame { PlayerId = Str(f, "playerId"), Data = Obj(f, "data") };
        }

        static OfferTerms Offer(Dictionary<string, object> option)
        {
            object value;
            var offer = option.TryGetValue("offer", out value) ? value as Dictionary<string, object> : null;
            if (offer == null) return null;
            return new OfferTerms { Action = Str(offer, "action"), Cost = Str(offer, "cost") };
        }

        /// <summary>The frame's speakerId, or null outside a scene.</summary>
        static string Speaker(Dictionary<string, object> f)
        {
            object value;
            return f.TryGetValue("speakerId", out value) ? value as string : null;
        }

        static string Str(Dictionary<string, object> f, string key)
        {
            object value;
            return f.TryGetValue(key, out value) && value is string ? (string)value : "";
        }

        static int Int(Dictionary<string, object> f, string key)
        {
            object value;
            return f.TryGetValue(key, out value) && value is double ? (int)(double)value : 0;
        }

        static bool Bool(Dictionary<string, object> f, string key)
        {
            object value;
            return f.TryGetValue(key, out value) && value is bool && (bool)value;
        }

        static Dictionary<string, object> Obj(Dictionary<string, object> f, string key)
        {
            object value;
            var map = f.TryGetValue(key, out value) ? value as Dictionary<string, object> : null;
            return map ?? new Dictionary<string, object>();
        }

        static List<object> List(Dictionary<string, object> f, string key)
        {
            object value;
            var list = f.TryGetValue(key, out value) ? value as List<object> : null;
            return list ?? new List<object>();
        }
    }

    /// <summary>The JSON text of each up frame.</summary>
    public static class UpFrames
    {
        public static string Hello(string playerId)
        {
            return Build("hello", "playerId", playerId);
        }

        public static string Open(string encounterId, string npcId, string playerId)
        {
            return Build("encounter.open", "id", encounterId, "npcId", npcId, "playerId", playerId);
        }

        /// <summary>A scene of the NPCs npcIds (1 to 4, in one place); npcIds[0] speaks first.
        /// With join (revision 3) the player joins the scene other players at the place have
        /// with exactly these NPCs, or opens one they can join.</summary>
        public static string OpenScene(string encounterId, IList<string> npcIds, string playerId,
                                       bool join = false)
        {
            var ids = new List<object>();
            foreach (var npcId in npcIds) ids.Add(npcId);
            var frame = new Dictionary<string, object>
            {
                { "t", "encounter.open" }, { "id", encounterId }, { "npcId", npcIds[0] },
                { "npcIds", ids }, { "playerId", playerId }
            };
            if (join) frame["join"] = true;
            return Json.Write(frame);
        }

        public static string Say(string encounterId, string text)
        {
            return Build("encounter.say", "id", encounterId, "text", text);
        }

        /// <summary>In a scene: free text to the NPC npcId (the others hear it too).</summary>
        public static string SayTo(string encounterId, string npcId, string text)
        {
            return Build("encounter.say", "id", encounterId, "text", text, "to", npcId);
        }

        public static string SayOption(string encounterId, string optionId)
        {
            return Build("encounter.say", "id", encounterId, "optionId", optionId);
        }

        public static string Close(string encounterId)
        {
            return Build("encounter.close", "id", encounterId);
        }

        public static string Tick(int days)
        {
            var frame = new Dictionary<string, object> { { "t", "world.tick" }, { "days", days } };
            return Json.Write(frame);
        }

        static string Build(string type, params string[] fields)
        {
            var frame = new Dictionary<string, object> { { "t", type } };
            for (int i = 0; i + 1 < fields.Length; i += 2) frame[fields[i]] = fields[i + 1];
            return Json.Write(frame);
        }
    }
}
