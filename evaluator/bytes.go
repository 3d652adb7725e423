package evaluator

import (
	"encoding/json"
	"reflect"
	"strings"
	"unicode/utf8"
)

// The policies' results reach Go through encoding/json, which writes a byte
// that is not UTF-8 as U+FFFD. A file name is bytes, though, and can hold any
// (a directory "a\xff" beside "a\uFFFD", both in one pull request): read back
// as U+FFFD, a finding, the model and the fix built from them named the other
// file. So a string that is not UTF-8 crosses the JSON as a reversible UTF-8
// spelling, and is given its bytes back on the Go side (fromResult).
//
// The spelling: byteEscape (a private-use code point) followed by
// byteBase+b stands for the byte b that is not UTF-8, and byteEscape written
// twice for byteEscape itself; nothing else changes. Decoding only follows
// encoding, so every string is read back as it was.
const (
	byteEscape = '\U0010FFFD'
	byteBase   = 0x10FE00
)

// bytesToKeep reports whether the results of evaluating objs may hold a
// string that is not UTF-8: one of their file names (or a kustomization's
// or chart's directory) is not. Object values are UTF-8 (the loader refuses
// other text); so are the results of every other input, which spares the
// results' walk (about a sixth of the time the JSON takes) on every run but
// these.
func bytesToKeep(objs []Object) bool {
	for i := range objs {
		if !utf8.ValidString(objs[i].Path) || !utf8.ValidString(objs[i].RenderedBy) {
			return true
		}
	}
	return false
}

// fromResult decodes v, a value of the policies' result, into out (a pointer)
// through JSON; with keep, every string keeps its bytes.
func fromResult(v any, out any, keep bool) error {
	spelled := false
	if keep {
		v, spelled = spell(v)
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return err
	}
	if spelled {
		unspell(reflect.ValueOf(out))
	}
	return nil
}

// spell returns v with every string that is not UTF-8 (or that holds
// byteEscape) spelled in UTF-8, map keys included; changed reports whether
// any was. Maps and slices are changed in place.
func spell(v any) (out any, changed bool) {
	switch x := v.(type) {
	case string:
		s, ok := spellString(x)
		return s, ok
	case map[string]any:
		var renamed []string
		for k, e := range x {
			if ne, ok := spell(e); ok {
				x[k], changed = ne, true
			}
			if _, ok := spellString(k); ok {
				renamed = append(renamed, k)
			}
		}
		for _, k := range renamed {
			nk, _ := spellString(k)
			x[nk] = x[k]
			delete(x, k)
			changed = true
		}
		return x, changed
	case []any:
		for i, e := range x {
			if ne, ok := spell(e); ok {
				x[i], changed = ne, true
			}
		}
		return x, changed
	}
	return v, false
}

func spellString(s string) (string, bool) {
	if utf8.ValidString(s) && !strings.ContainsRune(s, byteEscape) {
		return s, false
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteRune(byteEscape)
			b.WriteRune(byteBase + rune(s[i]))
		case r == byteEscape:
			b.WriteRune(byteEscape)
			b.WriteRune(byteEscape)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String(), true
}

func unspellString(s string) string {
	if !strings.ContainsRune(s, byteEscape) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if r != byteEscape || i == len(s) {
			b.WriteString(s[i-size : i])
			continue
		}
		n, nsize := utf8.DecodeRuneInString(s[i:])
		switch {
		case n == byteEscape:
			b.WriteRune(byteEscape)
		case n >= byteBase && n <= byteBase+0xff:
			b.WriteByte(byte(n - byteBase))
		default:
			b.WriteRune(r)
			continue
		}
		i += nsize
	}
	return b.String()
}

// unspell gives every string reachable from v (exported fields, elements,
// map keys and values, values held in interfaces) its bytes back.
func unspell(v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		if v.CanSet() {
			v.SetString(unspellString(v.String()))
		}
	case reflect.Pointer:
		if !v.IsNil() {
			unspell(v.Elem())
		}
	case reflect.Interface:
		if v.IsNil() || !v.CanSet() {
			return
		}
		c := reflect.New(v.Elem().Type()).Elem()
		c.Set(v.Elem())
		unspell(c)
		v.Set(c)
	case reflect.Struct:
		t := v.Type()
		for i := range v.NumField() {
			if t.Field(i).IsExported() {
				unspell(v.Field(i))
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			unspell(v.Index(i))
		}
	case reflect.Map:
		if v.IsNil() {
			return
		}
		type entry struct{ k, v reflect.Value }
		var entries []entry
		iter := v.MapRange()
		for iter.Next() {
			k := reflect.New(iter.Key().Type()).Elem()
			k.Set(iter.Key())
			e := reflect.New(iter.Value().Type()).Elem()
			e.Set(iter.Value())
			entries = append(entries, entry{k, e})
		}
		for _, en := range entries {
			old := reflect.New(en.k.Type()).Elem()
			old.Set(en.k)
			unspell(en.k)
			unspell(en.v)
			if en.k.Kind() == reflect.String && en.k.String() != old.String() {
				v.SetMapIndex(old, reflect.Value{})
			}
			v.SetMapIndex(en.k, en.v)
		}
	}
}
