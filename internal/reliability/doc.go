// Package reliability is the "nothing lost" fault-injection harness of
// RELIABILITY.md §6: a fake clock shared by the fake GitHub, the fake Jira,
// the GitHub adapter and reconcile; a World that seeds the fakes and runs
// real reconcile passes (Action runs with a fresh adapter and reconciler
// each, or App deliveries through the webhook server); a seeded delivery
// Scheduler that duplicates, re-emits, reorders, delays and drops
// deliveries and emulates the Actions concurrency rule; a model Oracle of
// the expected state written from PRODUCT.md, independently of the engine;
// and the invariants I1–I7 as reusable checks.
//
// The 27 cases of RELIABILITY.md §6 and the randomised schedules live in
// this package's tests; docs/reliability.md says how to run and replay them.
//
// It is test infrastructure: it must never be imported by the bot binary,
// never talk to the real GitHub or Jira, and never decide anything for the
// code under test — it only drives it and checks what it did.
package reliability
