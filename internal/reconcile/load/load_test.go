package load

import "testing"

func TestMarkerAndTagParsing(t *testing.T) {
	for _, tc := range []struct {
		marker string
		want   int64
	}{
		{"<!-- autopilot:announce 7-12 -->", 12},
		{"<!-- autopilot:gate g9-session-boundary -->", 9},
		{"<!-- autopilot:announce 8-12 -->", 0}, // another issue
		{"<!-- autopilot:reply 123 -->", 0},
		{"<!-- autopilot:notice state-lost -->", 0},
		{"<!-- autopilot:announce 7-x -->", 0},
		{"<!-- autopilot:gate gx-a -->", 0},
		{"<!-- autopilot:announce 7-9223372036854775807 -->", 0},
		{"<!-- other 7-12 -->", 0},
	} {
		if got := markerSeq(tc.marker, 7); got != tc.want {
			t.Errorf("markerSeq(%q) = %d, want %d", tc.marker, got, tc.want)
		}
	}
	for _, tc := range []struct {
		body string
		want int64
	}{
		{"<!-- autopilot:reply 1 -->\nhi" + VersionTag(14), 14},
		{"<!-- autopilot:reply 1 -->\nhi", 0},
		{"<!-- autopilot:reply 1 -->\nhi\n<!-- autopilot:v -3 -->", 0},
		{"<!-- autopilot:reply 1 -->\nhi\n<!-- autopilot:v 5 --> trailing", 0},
		{"<!-- autopilot:reply 1 -->\nhi\n<!-- autopilot:v 9223372036854775807 -->", 0}, // edited in: ignored, no overflow
	} {
		if got := taggedVersion(tc.body); got != tc.want {
			t.Errorf("taggedVersion(%q) = %d, want %d", tc.body, got, tc.want)
		}
	}
}

// FuzzMarkers: the readers of the bot's own markers never panic, read back
// what versionTag writes, and never read a negative number.
func FuzzMarkers(f *testing.F) {
	for _, s := range []string{"<!-- autopilot:announce 7-12 -->", "<!-- autopilot:gate g9-x -->", "hi" + VersionTag(3), "<!-- autopilot:v 99999999999999999999 -->", ""} {
		f.Add(s, int64(5))
	}
	f.Fuzz(func(t *testing.T, s string, v int64) {
		if got := markerSeq(s, 7); got < 0 {
			t.Fatalf("markerSeq(%q) = %d", s, got)
		}
		if got := taggedVersion(s); got < 0 {
			t.Fatalf("taggedVersion(%q) = %d", s, got)
		}
		if v < 0 || v > maxMarkerNumber {
			return
		}
		if got := taggedVersion(FirstLine(s) + "\nbody" + VersionTag(v)); got != v {
			t.Fatalf("taggedVersion of a tag for %d = %d", v, got)
		}
	})
}
