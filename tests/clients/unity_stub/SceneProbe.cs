// Reads scene frames and writes scene opens with the Unity package's frame types; run by
// tests/clients/test_client_scenes.py under mono.
using System; using System.Collections.Generic; using StarHarness.Client;
class Probe {
  static Dictionary<string, object> Read(string text) { string t; return FrameReader.ParseObject(text, out t); }
  static void Main() {
    Console.WriteLine(UpFrames.OpenScene("s1", new List<string> { "a", "b" }, "p1"));
    Console.WriteLine(UpFrames.SayTo("s1", "b", "hi"));
    var opened = FrameReader.EncounterOpened(Read(
      "{\"t\":\"encounter.opened\",\"id\":\"s1\",\"npcName\":\"Ada\",\"attitude\":3,\"speakerId\":\"a\","
      + "\"npcs\":[{\"id\":\"a\",\"name\":\"Ada\",\"attitude\":3},{\"id\":\"b\",\"name\":\"Bo\",\"attitude\":-2}]}"));
    Console.WriteLine(opened.SpeakerId + " " + opened.Npcs.Count + " " + opened.Npcs[1].Name + " " + opened.Npcs[1].Attitude);
    var delta = FrameReader.SayDelta(Read("{\"t\":\"say.delta\",\"id\":\"s1\",\"text\":\"x\",\"speakerId\":\"b\"}"));
    var options = FrameReader.Options(Read("{\"t\":\"options\",\"id\":\"s1\",\"items\":[],\"speakerId\":\"b\"}"));
    var action = FrameReader.Action(Read("{\"t\":\"action\",\"id\":\"s1\",\"name\":\"n\",\"ok\":true,\"summary\":\"s\",\"speakerId\":\"a\"}"));
    var end = FrameReader.SayEnd(Read("{\"t\":\"say.end\",\"id\":\"s1\",\"mood\":\"calm\",\"speakerId\":\"b\"}"));
    Console.WriteLine(delta.SpeakerId + options.SpeakerId + action.SpeakerId + end.SpeakerId);
    var plain = FrameReader.SayDelta(Read("{\"t\":\"say.delta\",\"id\":\"e1\",\"text\":\"x\"}"));
    var single = FrameReader.EncounterOpened(Read("{\"t\":\"encounter.opened\",\"id\":\"e1\",\"npcName\":\"Ada\",\"attitude\":3}"));
    Console.WriteLine((plain.SpeakerId == null) + " " + (single.Npcs == null));
    // Shared scenes (revision 3): the join, the revision, another player's name.
    Console.WriteLine(UpFrames.OpenScene("s2", new List<string> { "a", "b" }, "p1", true));
    var old = FrameReader.Welcome(Read("{\"t\":\"welcome\",\"protocol\":1,\"hud\":{},\"npcs\":[]}"));
    var shared = FrameReader.Welcome(Read("{\"t\":\"welcome\",\"protocol\":1,\"revision\":3,\"hud\":{},\"npcs\":[]}"));
    var other = FrameReader.SayDelta(Read(
      "{\"t\":\"say.delta\",\"id\":\"s1\",\"text\":\"hi\",\"speakerId\":\"p2\",\"speakerName\":\"Captain Ash\"}"));
    Console.WriteLine(old.Revision + " " + shared.Revision + " " + other.SpeakerId + " " + other.SpeakerName + " " + (delta.SpeakerName == null));
    // Who is in a shared scene (revision 3's scene.players).
    var players = FrameReader.ScenePlayers(Read(
      "{\"t\":\"scene.players\",\"id\":\"s2\",\"players\":[{\"id\":\"p1\",\"name\":\"Captain Ash\"},{\"id\":\"p2\",\"name\":\"Captain Birch\"}]}"));
    Console.WriteLine(players.Id + " " + players.Players.Count + " " + players.Players[1].Id + " " + players.Players[1].Name);
  }
}
