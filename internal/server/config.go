package server

// MaxBody is the largest webhook body accepted (GitHub caps payloads at
// 25 MiB); a larger body is answered 413.
const MaxBody = 25 << 20
