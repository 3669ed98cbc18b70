// Package labelsync works out the label writes that make an issue's
// autopilot labels match the state (labels.Labels decides which): what to
// add and remove, and how a new label is painted.
package labelsync

import (
	"github.com/autopilot-dev/autopilot/internal/engine/labels"
	"github.com/autopilot-dev/autopilot/internal/forge"
)

// Diff is what to add to have (the labels in want it lacks, in want's
// order) and what to remove from it (autopilot's labels not in want, in
// have's order); other labels are never touched.
func Diff(have, want []string) (add, del []string) {
	haveSet := map[string]bool{}
	for _, l := range have {
		haveSet[l] = true
	}
	for _, l := range want {
		if !haveSet[l] {
			add = append(add, l)
		}
	}
	wantSet := map[string]bool{}
	for _, l := range want {
		wantSet[l] = true
	}
	for _, l := range have {
		if labels.Managed(l) && !wantSet[l] {
			del = append(del, l)
		}
	}
	return add, del
}

// Defs gives each label its colour and description. A label is
// created by GitHub when a run first adds it to an issue, and painted then
// (forge.Forge.AddLabels): the repository never gets a label no run applied.
func Defs(names []string) []forge.Label {
	defs := make([]forge.Label, len(names))
	for i, l := range names {
		c, d := labels.LabelColor(l)
		defs[i] = forge.Label{Name: l, Color: c, Description: d}
	}
	return defs
}

// Without is xs without the labels in drop.
func Without(xs, drop []string) []string {
	var out []string
	for _, x := range xs {
		keep := true
		for _, d := range drop {
			if x == d {
				keep = false
			}
		}
		if keep {
			out = append(out, x)
		}
	}
	return out
}

// SameManaged reports whether two label lists agree on autopilot's labels.
func SameManaged(a, b []string) bool {
	set := map[string]int{}
	for _, l := range a {
		if labels.Managed(l) {
			set[l] |= 1
		}
	}
	for _, l := range b {
		if labels.Managed(l) {
			set[l] |= 2
		}
	}
	for _, v := range set {
		if v != 3 {
			return false
		}
	}
	return true
}
