// Package browsertest drives the dashboard in headless Chromium (Debian's
// chromium package; .ci/run installs it) through two App replicas sharing
// one Redis and the fake GitHub. It holds only tests; without Chromium or
// Redis they are skipped, saying which is missing.
package browsertest
