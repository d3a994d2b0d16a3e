// The few UnityEngine types the star-harness Unity client uses, so Debian's mcs can compile
// the package outside Unity. Signatures follow Unity's public API; bodies do nothing useful.
using System;

namespace UnityEngine
{
    public class Object
    {
    }

    public class Component : Object
    {
    }

    public class Behaviour : Component
    {
        public bool enabled { get; set; }
    }

    public class MonoBehaviour : Behaviour
    {
    }

    public static class Debug
    {
        public static void Log(object message) { Console.WriteLine(message); }
        public static void LogWarning(object message) { Console.WriteLine(message); }
        public static void LogError(object message) { Console.Error.WriteLine(message); }
        public static void LogException(Exception exception) { Console.Error.WriteLine(exception); }
    }

    [AttributeUsage(AttributeTargets.Field)]
    public sealed class SerializeField : Attribute
    {
    }

    [AttributeUsage(AttributeTargets.Field)]
    public sealed class TooltipAttribute : Attribute
    {
        public TooltipAttribute(string tooltip) { this.tooltip = tooltip; }
        public readonly string tooltip;
    }
}

namespace UnityEngine.Scripting
{
    [AttributeUsage(AttributeTargets.All)]
    public sealed class PreserveAttribute : Attribute
    {
    }
}
