using System;
using System.Collections.Generic;
using System.Globalization;
using System.Text;

namespace StarHarness.Client
{
    /// <summary>
    /// A small JSON reader and writer: objects become Dictionary&lt;string, object&gt;, arrays
    /// List&lt;object&gt;, numbers double, plus string, bool and null. It uses no reflection, so
    /// IL2CPP code stripping cannot remove anything it needs.
    /// </summary>
    public static class Json
    {
        const int MaxDepth = 64;

        /// <summary>Parse one JSON value; FormatException names the position of a problem.</summary>
        public static object Parse(string text)
        {
            if (text == null) throw new ArgumentNullException("text");
            var reader = new Reader(text);
            object value = reader.ReadValue(0);
            reader.SkipWhitespace();
            if (!reader.AtEnd) throw reader.Error("unexpected text after the value");
            return value;
        }

        /// <summary>Write strings, numbers, bools, null, dictionaries and lists as compact JSON.</summary>
        public static string Write(object value)
        {
            var builder = new StringBuilder();
            WriteValue(builder, value);
            return builder.ToString();
        }

        static void WriteValue(StringBuilder builder, object value)
        {
            if (value == null) { builder.Append("null"); return; }
            var text = value as string;
            if (text != null) { WriteString(builder, text); return; }
            if (value is bool) { builder.Append((bool)value ? "true" : "false"); return; }
            if (value is int || value is long || value is double || value is float)
            {
                builder.Append(Convert.ToString(value, CultureInfo.InvariantCulture));
                return;
            }
            var map = value as IDictionary<string, object>;
            if (map != null)
            {
                builder.Append('{');
                bool first = true;
                foreach (var pair in map)
                {
                    if (!first) builder.Append(',');
                    first = false;
                    WriteString(builder, pair.Key);
                    builder.Append(':');
                    WriteValue(builder, pair.Value);
                }
                builder.Append('}');
                return;
            }
            var list = value as IList<object>;
            if (list != null)
            {
                builder.Append('[');
                for (int i = 0; i < list.Count; i++)
                {
                    if (i > 0) builder.Append(',');
                    WriteValue(builder, list[i]);
                }
                builder.Append(']');
                return;
            }
            throw new ArgumentException("cannot write a " + value.GetType().Name + " as JSON");
        }

        static void WriteString(StringBuilder builder, string text)
        {
            builder.Append('"');
            foreach (char c in text)
            {
                switch (c)
                {
                    case '"': builder.Append("\\\""); break;
                    case '\\': builder.Append("\\\\"); break;
                    case '\n': builder.Append("\\n"); break;
                    case '\r': builder.Append("\\r"); break;
                    case '\t': builder.Append("\\t"); break;
                    default:
                        if (c < ' ') builder.Append("\\u").Append(((int)c).ToString("x4"));
                        else builder.Append(c);
                        break;
                }
            }
            builder.Append('"');
        }

        sealed class Reader
        {
            readonly string _text;
            int _at;

            public Reader(string text) { _text = text; }

            public bool AtEnd { get { return _at >= _text.Length; } }

            public FormatException Error(string problem)
            {
                return new FormatException("JSON: " + problem + " at character " + _at);
            }

            public void SkipWhitespace()
            {
                while (!AtEnd && (_text[_at] == ' ' || _text[_at] == '\t'
                       || _text[_at] == '\n' || _text[_at] == '\r'))
                    _at++;
            }

            public object ReadValue(int depth)
            {
                if (depth > MaxDepth) throw Error("nested too deeply");
                SkipWhitespace();
                if (AtEnd) throw Error("a value is missing");
                char c = _text[_at];
                if (c == '{') return ReadObject(depth);
                if (c == '[') return ReadArray(depth);
                if (c == '"') return ReadString();
                if (c == 't') return ReadWord("true", true);
                if (c == 'f') return ReadWord("false", false);
                if (c == 'n') return ReadWord("null", null);
                if (c == '-' || (c >= '0' && c <= '9')) return ReadNumber();
                throw Error("unexpected '" + c + "'");
            }

            Dictionary<string, object> ReadObject(int depth)
            {
                var result = new Dictionary<string, object>();
                _at++;
                SkipWhitespace();
                if (!AtEnd && _text[_at] == '}') { _at++; return result; }
                while (true)
                {
                    SkipWhitespace();
                    if (AtEnd || _text[_at] != '"') throw Error("an object key must be a string");
                    string key = ReadString();
                    SkipWhitespace();
                    Expect(':');
                    result[key] = ReadValue(depth + 1);
                    SkipWhitespace();
                    if (AtEnd) throw Error("an object is not closed");
                    if (_text[_at] == ',') { _at++; continue; }
                    Expect('}');
                    return result;
                }
            }

            List<object> ReadArray(int depth)
            {
                var result = new List<object>();
                _at++;
                SkipWhitespace();
                if (!AtEnd && _text[_at] == ']') { _at++; return result; }
                while (true)
                {
                    result.Add(ReadValue(depth + 1));
                    SkipWhitespace();
                    if (AtEnd) throw Error("an array is not closed");
                    if (_text[_at] == ',') { _at++; continue; }
                    Expect(']');
                    return result;
                }
            }

            string ReadString()
            {
                var builder = new StringBuilder();
                _at++;
                while (true)
                {
                    if (AtEnd) throw Error("a string is not closed");
                    char c = _text[_at++];
                    if (c == '"') return builder.ToString();
                    if (c != '\\') { builder.Append(c); continue; }
                    if (AtEnd) throw Error("a string is not closed");
                    char escape = _text[_at++];
                    switch (escape)
                    {
                        case '"': builder.Append('"'); break;
                        case '\\': builder.Append('\\'); break;
                        case '/': builder.Append('/'); break;
                        case 'b': builder.Append('\b'); break;
                        case 'f': builder.Append('\f'); break;
                        case 'n': builder.Append('\n'); break;
                        case 'r': builder.Append('\r'); break;
                        case 't': builder.Append('\t'); break;
                        case 'u': builder.Append(ReadHexChar()); break;
                        default: throw Error("unknown escape \\" + escape);
                    }
                }
            }

            char ReadHexChar()
            {
                if (_at + 4 > _text.Length) throw Error("a \\u escape needs four hex digits");
                int code;
                if (!int.TryParse(_text.Substring(_at, 4), NumberStyles.AllowHexSpecifier,
                                  CultureInfo.InvariantCulture, out code))
                    throw Error("a \\u escape needs four hex digits");
                _at += 4;
                // Surrogate pairs arrive as two escapes; appending both rebuilds the character.
                return (char)code;
            }

            double ReadNumber()
            {
                int start = _at;
                while (!AtEnd && "+-0123456789.eE".IndexOf(_text[_at]) >= 0) _at++;
                double number;
                if (!double.TryParse(_text.Substring(start, _at - start), NumberStyles.Float,
                                     CultureInfo.InvariantCulture, out number))
                    throw Error("not a number");
                return number;
            }

            object ReadWord(string word, object value)
            {
                if (string.CompareOrdinal(_text, _at, word, 0, word.Length) != 0)
                    throw Error("expected " + word);
                _at += word.Length;
                return value;
            }

            void Expect(char c)
            {
                if (AtEnd || _text[_at] != c) throw Error("expected '" + c + "'");
                _at++;
            }
        }
    }
}
