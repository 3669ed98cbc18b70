package jsonproj

import "encoding/binary"

// MaxDepth is the deepest nesting Project follows; deeper payloads
// (encoding/json allows 10,000 levels) are refused (ghevent decodes them
// the slow way).
const MaxDepth = 512

// Project checks that payload is one well-formed JSON object (RFC 8259, as
// encoding/json reads it: invalid UTF-8 inside strings is allowed) and
// returns the object reduced to the members p keeps, whitespace dropped.
// Members are copied byte for byte and in order, duplicates included, so
// encoding/json decodes the reduced object into p's type exactly as it
// decodes payload. ok is false when payload is not such an object, or when
// Project cannot vouch for it.
func Project(payload []byte, p *Projection) (lean []byte, ok bool) {
	s := scanner{in: payload, out: make([]byte, 0, 1024)}
	i := s.ws(0)
	if i >= len(payload) || payload[i] != '{' {
		return nil, false
	}
	i, ok = s.object(i, p, 0)
	if !ok || s.ws(i) != len(payload) {
		return nil, false
	}
	return s.out, true
}

// scanner walks the input once, validating everything and appending what
// is kept to out.
type scanner struct {
	in  []byte
	out []byte
}

// ws skips JSON whitespace from i.
func (s *scanner) ws(i int) int {
	for i < len(s.in) {
		switch s.in[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// value handles the value starting at or after i (after whitespace). With
// emit, it is appended to out: projected through p when p fits it, else
// verbatim. It returns the index just past the value.
func (s *scanner) value(i int, p *Projection, emit bool, depth int) (int, bool) {
	i = s.ws(i)
	if i >= len(s.in) {
		return i, false
	}
	if emit && p != nil {
		switch {
		case s.in[i] == '{' && p.elem == nil:
			return s.object(i, p, depth)
		case s.in[i] == '[' && p.elem != nil:
			return s.array(i, p.elem, depth)
		}
	}
	start := i
	end, ok := s.skip(i, depth)
	if ok && emit {
		s.out = append(s.out, s.in[start:end]...)
	}
	return end, ok
}

// object projects the object at i (s.in[i] == '{') through p.
func (s *scanner) object(i int, p *Projection, depth int) (int, bool) {
	s.out = append(s.out, '{')
	i, empty, ok := s.open(i, '}', depth)
	if empty || !ok {
		s.out = append(s.out, '}')
		return i, ok
	}
	first := true
	for more := true; more; {
		keyStart := i
		keyEnd, next, ok := s.key(i)
		if !ok {
			return next, false
		}
		name := s.in[keyStart+1 : keyEnd-1]
		keep, child := p.match(name, plain(name))
		if keep {
			if !first {
				s.out = append(s.out, ',')
			}
			first = false
			s.out = append(s.out, s.in[keyStart:keyEnd]...)
			s.out = append(s.out, ':')
		}
		if i, ok = s.value(next, child, keep, depth+1); !ok {
			return i, false
		}
		if i, more, ok = s.sep(i, '}'); !ok {
			return i, false
		}
	}
	s.out = append(s.out, '}')
	return i, true
}

// array projects each element of the array at i (s.in[i] == '[') through
// elem.
func (s *scanner) array(i int, elem *Projection, depth int) (int, bool) {
	s.out = append(s.out, '[')
	i, empty, ok := s.open(i, ']', depth)
	for more := !empty && ok; more; {
		if i, ok = s.value(i, elem, true, depth+1); !ok {
			return i, false
		}
		if i, more, ok = s.sep(i, ']'); more {
			s.out = append(s.out, ',')
		}
	}
	s.out = append(s.out, ']')
	return i, ok
}

// skip validates the value at i without keeping it.
func (s *scanner) skip(i int, depth int) (int, bool) {
	switch c := s.in[i]; {
	case c == '"':
		return s.str(i)
	case c == '{':
		return s.skipContainer(i, '}', depth, true)
	case c == '[':
		return s.skipContainer(i, ']', depth, false)
	case c == '-' || c >= '0' && c <= '9':
		return s.number(i)
	case c == 't':
		return s.literal(i, "true")
	case c == 'f':
		return s.literal(i, "false")
	case c == 'n':
		return s.literal(i, "null")
	}
	return i, false
}

// skipContainer validates the object (keyed) or array at i.
func (s *scanner) skipContainer(i int, closer byte, depth int, keyed bool) (int, bool) {
	i, empty, ok := s.open(i, closer, depth)
	for more := !empty && ok; more; {
		if keyed {
			if _, i, ok = s.key(i); !ok {
				return i, false
			}
		}
		if i, ok = s.value(i, nil, false, depth+1); !ok {
			return i, false
		}
		i, more, ok = s.sep(i, closer)
	}
	return i, ok
}

// open enters the object or array at i, one level deeper than depth, and
// reports whether it closes at once.
func (s *scanner) open(i int, closer byte, depth int) (next int, empty, ok bool) {
	if depth >= MaxDepth {
		return i, false, false
	}
	i = s.ws(i + 1)
	if i < len(s.in) && s.in[i] == closer {
		return i + 1, true, true
	}
	return i, false, true
}

// key validates a member name at i and the colon after it, and returns
// the index past the name's closing quote and the index past the colon.
func (s *scanner) key(i int) (end, next int, ok bool) {
	if i >= len(s.in) || s.in[i] != '"' {
		return i, i, false
	}
	if end, ok = s.str(i); !ok {
		return end, end, false
	}
	if next = s.ws(end); next >= len(s.in) || s.in[next] != ':' {
		return end, next, false
	}
	return end, next + 1, true
}

// sep reads what follows a member or an element: a comma (more follows)
// or the closer.
func (s *scanner) sep(i int, closer byte) (next int, more, ok bool) {
	i = s.ws(i)
	switch {
	case i >= len(s.in):
		return i, false, false
	case s.in[i] == ',':
		return s.ws(i + 1), true, true
	case s.in[i] == closer:
		return i + 1, false, true
	}
	return i, false, false
}

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// str validates the string at i (s.in[i] == '"') and returns the index
// past its closing quote. Eight bytes at a time are cleared when none is a
// quote, a backslash or a control character.
func (s *scanner) str(i int) (int, bool) {
	in := s.in
	i++
	for {
		for i+8 <= len(in) {
			x := binary.LittleEndian.Uint64(in[i:])
			quote := x ^ (ones * '"')
			slash := x ^ (ones * '\\')
			special := (x - ones*0x20) | (quote - ones) | (slash - ones)
			special &= ^x & highs // high bytes (>= 0x80) are never special
			if special != 0 {
				break
			}
			i += 8
		}
		if i >= len(in) {
			return i, false
		}
		switch c := in[i]; {
		case c == '"':
			return i + 1, true
		case c == '\\':
			n, ok := escape(in, i)
			if !ok {
				return i, false
			}
			i += n
		case c < 0x20:
			return i, false
		default:
			i++
		}
	}
}

// escape validates the escape sequence at in[i] == '\\' and returns its
// length.
func escape(in []byte, i int) (int, bool) {
	if i+1 >= len(in) {
		return 0, false
	}
	switch in[i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2, true
	case 'u':
		if i+6 > len(in) {
			return 0, false
		}
		for _, h := range in[i+2 : i+6] {
			if !isHex(h) {
				return 0, false
			}
		}
		return 6, true
	}
	return 0, false
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// number validates -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? at i.
func (s *scanner) number(i int) (int, bool) {
	in := s.in
	if in[i] == '-' {
		i++
	}
	switch {
	case i < len(in) && in[i] == '0':
		i++
	case i < len(in) && in[i] >= '1' && in[i] <= '9':
		i = digits(in, i)
	default:
		return i, false
	}
	if i < len(in) && in[i] == '.' {
		j := digits(in, i+1)
		if j == i+1 {
			return j, false
		}
		i = j
	}
	if i < len(in) && (in[i] == 'e' || in[i] == 'E') {
		i++
		if i < len(in) && (in[i] == '+' || in[i] == '-') {
			i++
		}
		j := digits(in, i)
		if j == i {
			return j, false
		}
		i = j
	}
	return i, true
}

func digits(in []byte, i int) int {
	for i < len(in) && in[i] >= '0' && in[i] <= '9' {
		i++
	}
	return i
}

func (s *scanner) literal(i int, word string) (int, bool) {
	if len(s.in)-i < len(word) || string(s.in[i:i+len(word)]) != word {
		return i, false
	}
	return i + len(word), true
}

// plain reports whether a raw key has no escape and only ASCII bytes, so it
// is compared as it stands.
func plain(key []byte) bool {
	for _, c := range key {
		if c == '\\' || c >= 0x80 {
			return false
		}
	}
	return true
}
