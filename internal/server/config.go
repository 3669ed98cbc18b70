package server

import "github.com/autopilot-dev/autopilot/internal/server/settings"

// Config is the server's configuration; package settings reads it. The
// alias and the constants below spare the callers that build a Server in
// code an import of settings.
type Config = settings.Config

// Defaults the callers building a Config in code use.
const (
	DefaultWebhookPath = settings.DefaultWebhookPath
	DefaultLockTTL     = settings.DefaultLockTTL
	MinDedupeTTL       = settings.MinDedupeTTL
)

// MaxBody is the largest webhook body accepted (GitHub caps payloads at
// 25 MiB); a larger body is answered 413.
const MaxBody = 25 << 20
