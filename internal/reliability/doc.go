// Package reliability is the "nothing lost" fault-injection suite of
// RELIABILITY.md §6. Its tests hold the harness — a fake clock shared by the
// fake GitHub, the fake Jira, the GitHub adapter and reconcile; a World that
// seeds the fakes and runs real reconcile passes (Action runs with a fresh
// adapter and reconciler each, or App deliveries through the webhook
// server); a seeded delivery Scheduler that duplicates, re-emits, reorders,
// delays and drops deliveries and emulates the Actions concurrency rule; a
// model Oracle of the expected state written from PRODUCT.md, independently
// of the engine; and the invariants I1–I7 as checks — plus the 27 cases of
// the plan, the randomised schedules and the failing tests of known product
// bugs. docs/reliability.md says how to run them and replay a seed.
//
// It is test infrastructure: it has no code of its own outside its tests,
// must never be imported by the bot, never talks to the real GitHub or
// Jira, and never decides anything for the code under test — it only
// drives it and checks what it did.
package reliability
