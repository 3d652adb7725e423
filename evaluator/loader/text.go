package loader

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/flipflop-dev/flipflop/evaluator"
)

// decodeText turns the bytes of an input file into UTF-8 text, as YAML 1.2
// (§5.2) reads a stream: a UTF-8 byte order mark is dropped; UTF-16 and
// UTF-32, big or little endian, are recognised by their byte order mark or,
// without one, by the NUL bytes of an ASCII first character, and converted
// (line numbers stay those of the file). Anything else with a NUL byte is not
// a text file. Invalid UTF-8 is left for the document it is in to report, at
// its line (invalidUTF8).
func decodeText(path string, data []byte) ([]byte, *evaluator.LoadError) {
	enc, bom := detectEncoding(data)
	switch enc {
	case "UTF-8":
		data = data[bom:]
	case "UTF-16BE", "UTF-16LE":
		out, err := decodeUTF16(data[bom:], enc == "UTF-16BE")
		if err != "" {
			return nil, &evaluator.LoadError{Path: path, Line: lineAt(out, len(out)), Message: enc + " text: " + err}
		}
		data = out
	case "UTF-32BE", "UTF-32LE":
		out, err := decodeUTF32(data[bom:], enc == "UTF-32BE")
		if err != "" {
			return nil, &evaluator.LoadError{Path: path, Line: lineAt(out, len(out)), Message: enc + " text: " + err}
		}
		data = out
	}
	if i := bytes.IndexByte(data, 0); i >= 0 {
		return nil, &evaluator.LoadError{Path: path, Message: fmt.Sprintf("not a text file (a NUL byte at line %d; YAML is UTF-8, UTF-16 or UTF-32 text)", lineAt(data, i))}
	}
	return data, nil
}

// detectEncoding names the encoding of a YAML stream and the length of its
// byte order mark, following the table of YAML 1.2 §5.2.
func detectEncoding(b []byte) (string, int) {
	has := func(p ...byte) bool { return bytes.HasPrefix(b, p) }
	nonzero := func(i int) bool { return len(b) > i && b[i] != 0 }
	switch {
	case has(0, 0, 0xfe, 0xff):
		return "UTF-32BE", 4
	case len(b) >= 4 && has(0, 0, 0) && nonzero(3):
		return "UTF-32BE", 0
	case has(0xff, 0xfe, 0, 0):
		return "UTF-32LE", 4
	case len(b) >= 4 && nonzero(0) && b[1] == 0 && b[2] == 0 && b[3] == 0:
		return "UTF-32LE", 0
	case has(0xfe, 0xff):
		return "UTF-16BE", 2
	case len(b) >= 2 && b[0] == 0 && nonzero(1):
		return "UTF-16BE", 0
	case has(0xff, 0xfe):
		return "UTF-16LE", 2
	case len(b) >= 2 && nonzero(0) && b[1] == 0:
		return "UTF-16LE", 0
	case has(0xef, 0xbb, 0xbf):
		return "UTF-8", 3
	}
	return "UTF-8", 0
}

// decodeUTF16 converts UTF-16 to UTF-8. On an odd length or an unpaired
// surrogate it returns the text decoded so far and what is wrong.
func decodeUTF16(b []byte, big bool) ([]byte, string) {
	order := binary.ByteOrder(binary.LittleEndian)
	if big {
		order = binary.BigEndian
	}
	out := make([]byte, 0, len(b)/2+len(b)/8)
	for i := 0; i+1 < len(b); i += 2 {
		u := order.Uint16(b[i:])
		r := rune(u)
		if utf16.IsSurrogate(r) {
			if u >= 0xdc00 || i+3 >= len(b) {
				return out, fmt.Sprintf("an unpaired surrogate (0x%04x) at byte %d", u, i)
			}
			r = utf16.DecodeRune(r, rune(order.Uint16(b[i+2:])))
			if r == utf8.RuneError {
				return out, fmt.Sprintf("an unpaired surrogate (0x%04x) at byte %d", u, i)
			}
			i += 2
		}
		out = utf8.AppendRune(out, r)
	}
	if len(b)%2 != 0 {
		return out, "an odd number of bytes: the last character is cut"
	}
	return out, ""
}

// decodeUTF32 converts UTF-32 to UTF-8, stopping at a length that is not a
// multiple of 4 or a value that is not a character.
func decodeUTF32(b []byte, big bool) ([]byte, string) {
	order := binary.ByteOrder(binary.LittleEndian)
	if big {
		order = binary.BigEndian
	}
	out := make([]byte, 0, len(b)/4)
	for i := 0; i+3 < len(b); i += 4 {
		u := order.Uint32(b[i:])
		if u > utf8.MaxRune || (u >= 0xd800 && u <= 0xdfff) {
			return out, fmt.Sprintf("0x%08x at byte %d is not a character", u, i)
		}
		out = utf8.AppendRune(out, rune(u))
	}
	if len(b)%4 != 0 {
		return out, "a number of bytes that is not a multiple of 4: the last character is cut"
	}
	return out, ""
}

// invalidUTF8 finds the first byte of data that is not UTF-8 and describes it
// with its 1-based line and column, for a LoadError; ok is false when data is
// valid UTF-8.
func invalidUTF8(data []byte) (line int, msg string, ok bool) {
	if utf8.Valid(data) {
		return 0, "", false
	}
	i := 0
	for i < len(data) {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size == 1 {
			break
		}
		i += size
	}
	line = lineAt(data, i)
	lineStart := 0
	for j := 0; j < i; {
		if n := breakLen(data[j:i]); n > 0 {
			j += n
			lineStart = j
			continue
		}
		j++
	}
	col := utf8.RuneCount(data[lineStart:i]) + 1
	return line, fmt.Sprintf("invalid UTF-8: byte 0x%02x at column %d (Latin-1 or another legacy encoding? YAML files are UTF-8, UTF-16 or UTF-32)", data[i], col), true
}

// lineAt returns the 1-based line of byte offset i of data, counting line
// breaks as go-yaml does (see lineBreaks).
func lineAt(data []byte, i int) int {
	return lineBreaks(data[:min(i, len(data))]) + 1
}

// jsonHead is how far the Kubernetes decoder looks for the "{" that makes it
// read a stream as JSON (the buffer size Argo CD and kubectl give
// apimachinery's NewYAMLOrJSONDecoder).
const jsonHead = 4096

// jsonEscapes rewrites, in the part of data the Kubernetes decoder reads as
// JSON, the escapes of JSON that YAML has no reading of, as encoding/json
// reads them: a surrogate pair ("\ud83d\ude00", JSON's escape of a character
// outside the Basic Multilingual Plane, what Python's json.dumps writes)
// becomes the YAML escape of the character ("\U0001F600"), a lone surrogate
// U+FFFD ("\uFFFD"), and an escaped slash ("\/", what PHP's json_encode
// writes) a slash. That part is the JSON values at the start of data, one
// after another, when its first jsonHead bytes start with "{" after white
// space (YAMLOrJSONDecoder); a YAML stream is read by go-yaml there too,
// which refuses these escapes, and is left alone. Line breaks are kept, so
// lines stay those of the file.
func jsonEscapes(data []byte) []byte {
	if !hasJSONOnlyEscape(data) || !bytes.HasPrefix(bytes.TrimLeftFunc(data[:min(len(data), jsonHead)], unicode.IsSpace), []byte("{")) {
		return data
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	end := 0
	for {
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			break
		}
		end = int(dec.InputOffset())
	}
	// Valid JSON has a backslash only in a string, where it starts an
	// escape: no string needs to be tracked.
	out := make([]byte, 0, len(data))
	i := 0
	for {
		j := bytes.IndexByte(data[i:end], '\\')
		if j < 0 {
			break
		}
		j += i
		out = append(out, data[i:j]...)
		if data[j+1] == '/' {
			out = append(out, '/')
			i = j + 2
			continue
		}
		if data[j+1] != 'u' {
			out = append(out, data[j:j+2]...)
			i = j + 2
			continue
		}
		r := hex4(data[j+2 : j+6])
		switch {
		case r >= 0xd800 && r < 0xdc00 && j+12 <= end && data[j+6] == '\\' && data[j+7] == 'u' && utf16.IsSurrogate(hex4(data[j+8:j+12])) && hex4(data[j+8:j+12]) >= 0xdc00:
			out = fmt.Appendf(out, `\U%08X`, utf16.DecodeRune(r, hex4(data[j+8:j+12])))
			i = j + 12
		case utf16.IsSurrogate(r):
			out = append(out, `\uFFFD`...)
			i = j + 6
		default:
			out = append(out, data[j:j+6]...)
			i = j + 6
		}
	}
	return append(out, data[i:]...)
}

// hasJSONOnlyEscape reports whether data holds "\/", or "\u" followed by a
// surrogate (D800 to DFFF), escaped or not: a quick test before any JSON is
// decoded.
func hasJSONOnlyEscape(data []byte) bool {
	if bytes.Contains(data, []byte(`\/`)) {
		return true
	}
	for i := 0; ; {
		j := bytes.Index(data[i:], []byte(`\u`))
		if j < 0 {
			return false
		}
		j += i
		if j+3 < len(data) && data[j+2]|0x20 == 'd' && strings.IndexByte("89abcdefABCDEF", data[j+3]) >= 0 {
			return true
		}
		i = j + 2
	}
}

// hex4 reads four hexadecimal digits (valid JSON has them after "\u").
func hex4(b []byte) rune {
	n, err := strconv.ParseUint(string(b), 16, 32)
	if err != nil {
		return -1
	}
	return rune(n)
}
