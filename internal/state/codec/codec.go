// Package codec is the state comment's format: Render writes a state as
// Markdown (the human-readable part, escaped with textsafe) plus a machine
// block of base64 JSON, gzipped when large and optionally HMAC-signed; Parse
// reads it back and refuses what Render did not write. It also renders the
// archive comments of old decisions. The model and its schema (Valid) are
// package state; this package never does I/O.
package codec

import (
	"bytes"
	"compress/gzip"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/state/marker"
	"github.com/autopilot-dev/autopilot/internal/textsafe"
)

// Errors returned by Parse, always wrapped with a detail naming the field
// or the check that failed. Test them with errors.Is.
var (
	// ErrNotState: the first line is not state.Marker.
	ErrNotState = errors.New("not an autopilot state comment")
	// ErrCorrupt: the machine block is missing, duplicated, not base64, not
	// gzip, not JSON, has unknown fields, another schema, or a value
	// state.Valid rejects.
	ErrCorrupt = errors.New("corrupt state machine block")
	// ErrForeign: the state belongs to another repository or issue.
	ErrForeign = errors.New("state belongs to another issue")
	// ErrUnsigned: a key is configured but the state carries no signature.
	ErrUnsigned = errors.New("state is not signed")
	// ErrForged: the signature does not match the content.
	ErrForged = errors.New("state signature does not match")
	// ErrEdited: the machine block is authentic but the human-readable part
	// is not what autopilot rendered (someone edited it). Parse returns the
	// state with this error so the caller can re-render it.
	ErrEdited = errors.New("state comment was edited")
)

// StepInfo describes a step of the flow for the human-readable part.
type StepInfo struct {
	Slug  string // "plan"
	Name  string // "Plan"
	Label string // "Step 3", "Step 2b", "Pre"
}

// View is what Render needs besides the state: the flow's step names and
// labels (the state stores slugs only) and the banner's "Action:" line.
type View struct {
	Steps  []StepInfo
	Action string
}

// Want is what Parse expects: the state must belong to Repo (compared case-
// insensitively, as GitHub does) and Issue; with a Key it must be signed
// with it. A zero Want matches no state.
type Want struct {
	Repo  string
	Issue int
	Key   []byte
}

const (
	dataPrefix = marker.Prefix + marker.Data + " "
	// gzipPrefix starts a payload that is base64 of gzipped JSON.
	gzipPrefix = "z:"
	// gzipAbove is the base64 length above which the payload is gzipped.
	gzipAbove = 40000
	// maxInflated bounds the decompressed payload (zip-bomb guard).
	maxInflated = 8 << 20
	// maxBodyBytes bounds what Parse reads: MaxBody characters of at most
	// four bytes each.
	maxBodyBytes = 4 * textsafe.MaxBody
)

// hexRE matches the envelope's human hash: SHA-256 in lower-case hex.
var hexRE = regexp.MustCompile(`^[0-9a-f]{64}$`)

// envelope is the JSON inside the machine block.
type envelope struct {
	V     int          `json:"v"`
	State *state.State `json:"state"`
	Human string       `json:"human"` // SHA-256 (hex) of the human-readable part
}

// rawEnvelope is envelope with the state still JSON: its schema (V)
// decides how the state is read.
type rawEnvelope struct {
	V     int             `json:"v"`
	State json.RawMessage `json:"state"`
	Human string          `json:"human"`
}

// decoded is a machine block read: the state, the human part's hash, and,
// for a state written in schema 1, the bytes its signature covers.
type decoded struct {
	envelope
	signedV1 []byte
}

// Render returns the state comment body for s: the human-readable part
// (everything user-supplied escaped with textsafe) and the machine block.
//
// It validates s (state.Valid) and changes nothing but s.Sig: with a key
// it sets s.Sig to the HMAC-SHA256 (hex) of
// repo "\n" issue "\n" version "\n" content "\n" human, where content is
// the JSON of s with Sig empty and human the SHA-256 (hex) of the rendered
// human part; without a key it clears s.Sig (a stale signature would only
// make a later keyed Parse fail). The caller sets s.Version.
//
// The body stays within textsafe.SafeBody characters where possible: long
// tables and lists in the human part are cut to their last rows (the
// machine block always holds everything). Render fails only when s is
// invalid or the machine block alone cannot fit in textsafe.MaxBody.
func Render(s *state.State, view View, key []byte) (string, error) {
	if s == nil {
		return "", fmt.Errorf("render state: %w", state.Valid(nil))
	}
	oldSig := s.Sig
	s.Sig = ""
	if err := state.Valid(s); err != nil {
		s.Sig = oldSig
		return "", fmt.Errorf("render state: %w", err)
	}
	var content []byte
	if len(key) > 0 {
		var err error
		if content, err = json.Marshal(s); err != nil {
			s.Sig = oldSig
			return "", fmt.Errorf("render state: encode: %w", err)
		}
	}
	// The machine block's length does not depend on the human part (the
	// hash and signature have fixed lengths), so measure it once with a
	// placeholder and pick the first budget that fits; gzip output may
	// differ by a few bytes, which the final check catches.
	placeholder := strings.Repeat("0", 64)
	if len(key) > 0 {
		s.Sig = placeholder
	}
	probe, err := machineBlock(s, placeholder)
	if err != nil {
		s.Sig = oldSig
		return "", fmt.Errorf("render state: %w", err)
	}
	room := textsafe.SafeBody - textsafe.Len(probe)
	var body string
	for i, lim := range budgets {
		human := renderHuman(s, view, lim)
		if textsafe.Len(human) > room && i < len(budgets)-1 {
			continue
		}
		sum := humanHash(human)
		if len(key) > 0 {
			s.Sig = sign(key, s.Repo, s.Issue, s.Version, content, sum)
		}
		machine, err := machineBlock(s, sum)
		if err != nil {
			s.Sig = oldSig
			return "", fmt.Errorf("render state: %w", err)
		}
		body = human + machine
		if textsafe.Len(body) <= textsafe.SafeBody {
			return body, nil
		}
	}
	if n := textsafe.Len(body); n > textsafe.MaxBody {
		s.Sig = oldSig
		return "", fmt.Errorf("render state: %d characters with the shortest human part, over GitHub's %d: the machine block alone is too large (%d tasks, %d ledger entries, %d outbox effects)",
			n, textsafe.MaxBody, len(s.Tasks), len(s.Ledger), len(s.Outbox))
	}
	return body, nil
}

// MachineSize returns the length in characters of s's machine block as
// Render would write it (signed or not), without validating s.
func MachineSize(s *state.State, signed bool) (int, error) {
	c := *s
	c.Sig = ""
	if signed {
		c.Sig = strings.Repeat("0", 64)
	}
	block, err := machineBlock(&c, strings.Repeat("0", 64))
	if err != nil {
		return 0, err
	}
	return textsafe.Len(block), nil
}

// machineBlock encodes the envelope as the last line of the comment.
func machineBlock(s *state.State, human string) (string, error) {
	js, err := json.Marshal(envelope{V: state.SchemaVersion, State: s, Human: human})
	if err != nil {
		return "", fmt.Errorf("encode: %w", err)
	}
	payload := base64.StdEncoding.EncodeToString(js)
	if len(payload) > gzipAbove {
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		if _, err := zw.Write(js); err != nil {
			return "", fmt.Errorf("compress: %w", err)
		}
		if err := zw.Close(); err != nil {
			return "", fmt.Errorf("compress: %w", err)
		}
		payload = gzipPrefix + base64.StdEncoding.EncodeToString(buf.Bytes())
	}
	return dataPrefix + payload + marker.Suffix, nil
}

// Parse reads a state comment body and returns its state, rejecting
// anything Render did not write for this repository and issue (see the
// Err* values). Checks run in this order: marker (ErrNotState), machine
// block and state.Valid (ErrCorrupt), repository and issue (ErrForeign),
// signature when want.Key is set (ErrUnsigned, ErrForged), human part
// (ErrEdited — the only error returned with a state). Without a key any
// signature present is ignored.
//
// Parse does not order versions: an older, validly signed state of the same
// issue (a replay) parses fine. The caller keeps the highest version it has
// seen and refuses to go back. CRLF line endings are read as LF. Parse
// never panics.
func Parse(body string, want Want) (*state.State, error) {
	body = strings.ReplaceAll(body, "\r\n", "\n")
	if body != state.Marker && !strings.HasPrefix(body, state.Marker+"\n") {
		return nil, fmt.Errorf("%w: first line is not %s", ErrNotState, state.Marker)
	}
	if len(body) > maxBodyBytes {
		return nil, fmt.Errorf("%w: body of %d bytes is over GitHub's limit", ErrCorrupt, len(body))
	}
	human, payload, err := splitBody(body)
	if err != nil {
		return nil, err
	}
	env, err := decodePayload(payload)
	if err != nil {
		return nil, err
	}
	s := env.State
	if err := state.Valid(s); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	if !strings.EqualFold(s.Repo, want.Repo) || s.Issue != want.Issue {
		return nil, fmt.Errorf("%w: it is for %s#%d, not %s#%d", ErrForeign, s.Repo, s.Issue, want.Repo, want.Issue)
	}
	if len(want.Key) > 0 {
		if s.Sig == "" {
			return nil, fmt.Errorf("%w: sig is empty but a state key is configured", ErrUnsigned)
		}
		content := env.signedV1
		if content == nil {
			c := *s
			c.Sig = ""
			var err error
			if content, err = json.Marshal(&c); err != nil {
				return nil, fmt.Errorf("%w: re-encode: %w", ErrCorrupt, err)
			}
		}
		wantSig := sign(want.Key, s.Repo, s.Issue, s.Version, content, env.Human)
		if !hmac.Equal([]byte(wantSig), []byte(s.Sig)) {
			return nil, fmt.Errorf("%w: sig of version %d", ErrForged, s.Version)
		}
	}
	if humanHash(human) != env.Human {
		return s, fmt.Errorf("%w: the human-readable part differs from what was rendered for version %d", ErrEdited, s.Version)
	}
	return s, nil
}

// splitBody cuts the body into the human part (what the hash covers:
// everything but the machine block line) and the machine block's payload.
func splitBody(body string) (human, payload string, err error) {
	switch n := strings.Count(body, dataPrefix); {
	case n == 0:
		return "", "", fmt.Errorf("%w: machine block missing", ErrCorrupt)
	case n > 1:
		return "", "", fmt.Errorf("%w: %d machine blocks", ErrCorrupt, n)
	}
	i := strings.Index(body, "\n"+dataPrefix)
	if i < 0 {
		return "", "", fmt.Errorf("%w: machine block does not start a line", ErrCorrupt)
	}
	line, after, _ := strings.Cut(body[i+1:], "\n")
	payload, ok := strings.CutSuffix(strings.TrimPrefix(line, dataPrefix), marker.Suffix)
	if !ok {
		return "", "", fmt.Errorf("%w: machine block line does not end with %q", ErrCorrupt, marker.Suffix)
	}
	human = body[:i+1]
	if strings.TrimSpace(after) != "" {
		human += after // text added after the block counts as an edit
	}
	return human, payload, nil
}

func decodePayload(payload string) (*decoded, error) {
	zipped := strings.HasPrefix(payload, gzipPrefix)
	raw, err := base64.StdEncoding.Strict().DecodeString(strings.TrimPrefix(payload, gzipPrefix))
	if err != nil {
		return nil, fmt.Errorf("%w: payload is not base64: %w", ErrCorrupt, err)
	}
	if zipped {
		if raw, err = inflate(raw); err != nil {
			return nil, fmt.Errorf("%w: payload is not gzip: %w", ErrCorrupt, err)
		}
	}
	var env rawEnvelope
	if err := decodeStrict(raw, &env); err != nil {
		return nil, fmt.Errorf("%w: payload JSON: %w", ErrCorrupt, err)
	}
	out := &decoded{envelope: envelope{V: env.V, Human: env.Human}}
	js := []byte(env.State)
	switch {
	case env.V == 1 && len(js) > 0 && !bytes.Equal(js, []byte("null")):
		if js, out.signedV1, err = migrateV1(js); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
		}
	case env.V != state.SchemaVersion:
		return nil, fmt.Errorf("%w: envelope v is %d, this build reads %d (and 1)", ErrCorrupt, env.V, state.SchemaVersion)
	}
	if len(js) > 0 {
		if err := decodeStrict(js, &out.State); err != nil {
			return nil, fmt.Errorf("%w: payload JSON: %w", ErrCorrupt, err)
		}
	}
	if out.signedV1 != nil && out.State != nil {
		out.State.TrackerInUse = trackerOfV1(out.State)
	}
	switch {
	case out.State == nil:
		return nil, fmt.Errorf("%w: envelope has no state", ErrCorrupt)
	case !hexRE.MatchString(out.Human):
		return nil, fmt.Errorf("%w: envelope human hash is not 64 hex digits", ErrCorrupt)
	}
	return out, nil
}

// decodeStrict decodes one JSON value into v, refusing unknown fields and
// anything after the value.
func decodeStrict(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("data after the JSON value")
	}
	return nil
}

func inflate(raw []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	out, err := io.ReadAll(io.LimitReader(zr, maxInflated+1))
	if err != nil {
		return nil, err
	}
	if len(out) > maxInflated {
		return nil, fmt.Errorf("inflates to more than %d bytes", maxInflated)
	}
	return out, nil
}

func humanHash(human string) string {
	sum := sha256.Sum256([]byte(human))
	return hex.EncodeToString(sum[:])
}

// sign is the HMAC-SHA256 (hex) binding the content and the rendered human
// part to the repository, issue and version.
func sign(key []byte, repo string, issue int, version int64, content []byte, human string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(repo + "\n" + strconv.Itoa(issue) + "\n" + strconv.FormatInt(version, 10) + "\n"))
	m.Write(content)
	m.Write([]byte("\n" + human))
	return hex.EncodeToString(m.Sum(nil))
}
