package server

import "errors"

// ErrDropped marks a job error that is final: the delivery can never
// succeed (GitHub does not know the installation it was sent for), so
// retrying it, by the next event or the sweep, would only repeat the
// failure. The worker logs it once and counts the job with outcome
// "dropped" instead of "error".
var ErrDropped = errors.New("delivery dropped")

// ErrHeld marks a sweep GitHub's budget held: background work that waits
// for the budget's reset (the next sweep after it goes on), not failed
// work. The Sweeper logs the wait (installation, reason, until); the
// worker counts the job with outcome "held" and logs no failure, and the
// installation's last completed sweep keeps its time.
var ErrHeld = errors.New("held by the GitHub budget")
