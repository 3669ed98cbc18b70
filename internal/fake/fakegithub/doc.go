// Package fakegithub is a stateful, in-process fake of the parts of the
// GitHub REST API that autopilot uses, served by an httptest.Server.
//
// It keeps issues, pull requests, comments (with created_at, updated_at and
// an edit history), labels, reactions, collaborator permissions, files,
// checks, workflow runs and GitHub Apps, and answers with GitHub's JSON
// shapes, ETags, pagination Link headers and rate-limit headers. Tests drive
// it through a Go control API (seed state, inject faults with scripts, read
// snapshots and the request log) and point real clients at URL().
//
// It is test infrastructure: it must never be linked into the bot binary,
// never talk to the real GitHub, and never decide anything for the code under
// test. It has its own tests, because every test built on a fake that drifts
// from GitHub is blind to the drift.
package fakegithub
