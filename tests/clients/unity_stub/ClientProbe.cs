// Drives the Unity client's MonoBehaviour outside Unity (against the UnityEngine stub): calls
// Update like the player loop would and prints one line per event it raises, so a test can
// check every frame type reaches its event through a real WebSocket.
using System;
using System.Reflection;
using System.Threading;
using StarHarness.Client;

static class ClientProbe
{
    static int Main(string[] args)
    {
        var client = new StarHarnessClient();
        Set(client, "url", args[0]);
        Set(client, "playerId", "p1");
        MethodInfo update = typeof(StarHarnessClient).GetMethod(
            "Update", BindingFlags.NonPublic | BindingFlags.Instance);
        int idles = 0;
        bool done = false;

        client.OnWelcome += f =>
        {
            Print("welcome", f.Protocol + " " + f.Npcs.Count + " " + f.Npcs[0].Name + " "
                  + f.Hud["money"]);
            client.OpenEncounter(f.Npcs[0].Id);
        };
        client.OnEncounterOpened += f => Print("encounter.opened", f.NpcName + " " + f.Attitude);
        client.OnSayDelta += f => Print("say.delta", f.Text.Length + " " + Count(f.Text, '€'));
        client.OnSayEnd += f => Print("say.end", f.Mood);
        string offerId = null;
        client.OnOptions += f =>
        {
            string detail = f.Items.Count + (f.Items.Count > 0 ? " " + f.Items[0].Id : "");
            foreach (var item in f.Items)
            {
                if (!item.IsOffer) continue;
                detail += " [offer " + item.Id + " " + item.Offer.Action + " " + item.Offer.Cost + "]";
                offerId = item.Id;
            }
            Print("options", detail);
        };
        client.OnAction += f => Print("action", f.Name + " " + f.Ok + " " + f.Summary);
        client.OnError += f => Print("error", f.Code + " " + (f.Id ?? "-"));
        client.OnHud += f => Print("hud", f.PlayerId + " " + f.Data["money"]);
        client.OnWorldEvent += f =>
        {
            Print("world.event", f.LocationId + " " + f.Headline);
            done = true;
        };
        client.OnEncounterIdle += f =>
        {
            Print("encounter.idle", f.Id);
            idles++;
            if (idles == 1) client.SayOption(f.Id, "buy");
            else if (idles == 2) client.Say(f.Id, "no model");
            else if (idles == 3) client.Say(f.Id, "sell me ore");
            else if (idles == 4) client.SayOption(f.Id, offerId);
            else if (idles == 5) client.Tick(2);
        };

        client.Connect();
        DateTime deadline = DateTime.UtcNow.AddSeconds(double.Parse(args[1]));
        while (!done && DateTime.UtcNow < deadline)
        {
            update.Invoke(client, null);
            Thread.Sleep(5);
        }
        client.Disconnect();
        return done ? 0 : 1;
    }

    static void Set(object target, string field, object value)
    {
        target.GetType().GetField(field, BindingFlags.NonPublic | BindingFlags.Instance)
              .SetValue(target, value);
    }

    static int Count(string text, char c)
    {
        int n = 0;
        foreach (char x in text) if (x == c) n++;
        return n;
    }

    static void Print(string type, string detail)
    {
        Console.WriteLine(type + " " + detail);
        Console.Out.Flush();
    }
}
