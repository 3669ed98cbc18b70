package ghevent

import (
	"strconv"
	"strings"
)

// MergeGroup is a merge queue's request for checks on its temporary commit
// (merge_group.checks_requested).
type MergeGroup struct {
	HeadSHA string
	HeadRef string
	// PR is the pull request the queue entry is for, read from head_ref
	// ("refs/heads/gh-readonly-queue/<base>/pr-<N>-<sha>"); 0 when the ref
	// has another shape.
	PR int
}

// merge_group: checks_requested.
type mergeGroupPayload struct {
	envelope
	MergeGroup *struct {
		HeadSHA string `json:"head_sha"`
		HeadRef string `json:"head_ref"`
	} `json:"merge_group"`
}

func (p *mergeGroupPayload) fill(ev *Event) {
	if mg := p.MergeGroup; mg != nil {
		ev.MergeGroup = &MergeGroup{HeadSHA: mg.HeadSHA, HeadRef: mg.HeadRef, PR: queuedPR(mg.HeadRef)}
	}
}

func (p *mergeGroupPayload) check(ev *Event) error {
	switch {
	case ev.Repo == "":
		return missing(ev.Name, "repository.full_name")
	case p.MergeGroup == nil || p.MergeGroup.HeadSHA == "":
		return missing(ev.Name, "merge_group.head_sha")
	}
	return nil
}

// queuedPR reads the PR number from a merge queue branch,
// "refs/heads/gh-readonly-queue/<base>/pr-<N>-<base sha>" (the base branch
// may contain slashes).
func queuedPR(ref string) int {
	rest, ok := strings.CutPrefix(ref, "refs/heads/gh-readonly-queue/")
	if !ok {
		return 0
	}
	i := strings.LastIndex(rest, "/pr-")
	if i < 0 {
		return 0
	}
	num, _, ok := strings.Cut(rest[i+len("/pr-"):], "-")
	n, err := strconv.Atoi(num)
	if !ok || err != nil || n <= 0 || strconv.Itoa(n) != num {
		return 0
	}
	return n
}
