package tasksync

import "testing"

func TestTheFirstAvailableTransitionToADoneStatusCloses(t *testing.T) {
	for _, tc := range []struct {
		name string
		ts   []Transition
		want int
		ok   bool
	}{
		{"none offered", nil, 0, false},
		{"none to done", []Transition{{ID: "11"}, {ID: "21"}}, 0, false},
		{"the first to done", []Transition{{ID: "11"}, {ID: "31", ToDone: true}, {ID: "41", ToDone: true}}, 1, true},
		{"one without an id is skipped", []Transition{{ID: "", ToDone: true}, {ID: "41", ToDone: true}}, 1, true},
		{"an unavailable one is skipped", []Transition{{ID: "31", ToDone: true, Unavailable: true}, {ID: "41", ToDone: true}}, 1, true},
		{"only unavailable ones: none", []Transition{{ID: "31", ToDone: true, Unavailable: true}}, 0, false},
	} {
		got, ok := DoneTransition(tc.ts)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: %d, %v; want %d, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}
