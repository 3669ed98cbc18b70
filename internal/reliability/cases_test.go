package reliability

import (
	"fmt"
	"strings"
	"testing"
)

// relCase is one case of RELIABILITY.md §6.
type relCase struct {
	num  int
	slug string // test name suffix
	name string // summary name
	run  func(t *testing.T)
}

// reliabilityCases are the 27 cases of the plan, in its order, and the
// cases added since (28 on; docs/reliability.md).
var reliabilityCases = []relCase{
	{1, "conflicting_answers", "conflicting-answers", case01},
	{2, "lost_update", "lost-update", case02},
	{3, "burst_under_concurrency_group", "burst-under-concurrency-group", case03},
	{4, "crash_between_effects", "crash-between-effects", case04},
	{5, "slow_github_while_acking", "slow-github-while-acking", case05},
	{6, "redelivery_same_delivery_id", "redelivery-same-delivery-id", case06},
	{7, "same_comment_different_deliveries", "same-comment-different-deliveries", case07},
	{8, "answer_before_gate_visible", "answer-before-gate-visible", case08},
	{9, "stale_payload_snapshot", "stale-payload-snapshot", case09},
	{10, "missed_deliveries", "missed-deliveries", case10},
	{11, "5xx_on_writes", "5xx-on-writes", case11},
	{12, "secondary_rate_limit", "secondary-rate-limit", case12},
	{13, "primary_limit_exhausted", "primary-limit-exhausted", case13},
	{14, "404_on_deleted_objects", "404-on-deleted-objects", case14},
	{15, "422_validation_error", "422-validation-error", case15},
	{16, "collaborator_edits_state", "collaborator-edits-state", case16},
	{17, "state_comment_deleted", "state-comment-deleted", case17},
	{18, "forged_state_comment", "forged-state-comment", case18},
	{19, "marker_breakout", "marker-breakout", case19},
	{20, "non_collaborator_answers", "non-collaborator-answers", case20},
	{21, "association_vs_access", "association-vs-access", case21},
	{22, "bots_own_and_other_bots", "bots-own-and-other-bots", case22},
	{23, "malformed_webhooks", "malformed-webhooks", case23},
	{24, "huge_comments", "huge-comments", case24},
	{25, "homoglyphs", "homoglyphs", case25},
	{26, "mention_injection", "mention-injection", case26},
	{27, "jira_degraded", "jira-degraded", case27},
	// Issue 15 (issues that live for months), numbered on.
	{28, "long_thread", "long-thread", case28},
	{29, "state_size_limit", "state-size-limit", case29},
	{30, "crash_after_state_write", "crash-after-state-write", case30},
	{31, "token_revoked", "token-revoked", case31},
	{32, "overlap_hides_answer", "overlap-hides-answer", case32},
	// Issue 18 (tasks as GitHub sub-issues).
	{33, "subissue_lost_create", "subissue-lost-create", case33},
	{34, "subissue_crash_before_link", "subissue-crash-before-link", case34},
	{35, "subissue_secondary_limit_storm", "subissue-secondary-limit-storm", case35},
	// Issue 15, continued: an issue labelled after a long discussion.
	{36, "labelled_late", "labelled-late", case36},
	// Issue 15, continued: key decisions past one state comment.
	{37, "decisions_archive", "decisions-archive", case37},
}

// TestReliability runs the 27 cases of RELIABILITY.md §6, each asserting
// its Measure line; TestMain prints one summary line per case.
func TestReliability(t *testing.T) {
	for _, c := range reliabilityCases {
		name := fmt.Sprintf("case_%02d_%s", c.num, c.slug)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			res := caseResult{num: c.num, name: c.name, result: "fail"}
			defer func() {
				switch {
				case t.Skipped():
					res.result = "skip"
				case !t.Failed():
					res.result = "pass"
				}
				notesMu.Lock()
				res.note = strings.Join(notes[name], "; ")
				notesMu.Unlock()
				if res.result == "pass" && res.note != "" {
					res.result = "partial" // a variant waits for a product fix
				}
				record(res)
			}()
			c.run(t)
		})
	}
}
