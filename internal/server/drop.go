package server

import "errors"

// ErrDropped marks a job error that is final: the delivery can never
// succeed (GitHub does not know the installation it was sent for), so
// retrying it, by the next event or the sweep, would only repeat the
// failure. The worker logs it once and counts the job with outcome
// "dropped" instead of "error".
var ErrDropped = errors.New("delivery dropped")
