// Package github implements forge.Forge on go-github (v60) for one
// repository, and owns everything that makes talking to GitHub safe under
// its limits: ETag conditional reads (a 304 is free), pagination, spacing of
// mutations, honouring retry-after and x-ratelimit-reset without sending a
// single request inside a wait window, bounded retries with jitter for 5xx
// and network failures, duplicate-free comment creation after a lost
// response, and dry-run mode.
//
// The reliability rules live in one http.RoundTripper (package transport) placed
// under go-github, so the typed service methods and the raw
// NewRequest/Do calls (for fields go-github v60 lacks) share them.
//
// What it must never do: decide anything about the workflow, repeat a
// request GitHub rejected with 422 unchanged, retry a non-idempotent POST
// blindly, or map an error to a permission (callers fail closed).
package github
