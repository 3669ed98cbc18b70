package fakegithub

import (
	"encoding/json"
	"net/http"
	"strconv"
)

const docRoot = "https://docs.github.com/rest"

func ok(v any) reply      { return reply{status: http.StatusOK, body: v} }
func created(v any) reply { return reply{status: http.StatusCreated, body: v} }
func noContent() reply    { return reply{status: http.StatusNoContent} }

// errorReply is GitHub's error body: message, documentation_url, status.
func errorReply(status int, msg, doc string) reply {
	return reply{status: status, body: map[string]any{
		"message": msg, "documentation_url": doc, "status": strconv.Itoa(status),
	}}
}

func notFound() reply { return errorReply(http.StatusNotFound, "Not Found", docRoot) }

// fieldError is one entry of a 422 "Validation Failed" errors array.
type fieldError map[string]any

func validation(doc string, errs ...fieldError) reply {
	return reply{status: http.StatusUnprocessableEntity, body: map[string]any{
		"message": "Validation Failed", "errors": errs, "documentation_url": doc, "status": "422",
	}}
}

// decode unmarshals the request body; a malformed body is GitHub's 400.
func (c *call) decode(v any) (reply, bool) {
	if len(c.body) == 0 {
		return reply{}, true
	}
	if err := json.Unmarshal(c.body, v); err != nil {
		return errorReply(http.StatusBadRequest, "Problems parsing JSON", docRoot), false
	}
	return reply{}, true
}

// intParam parses a numeric path parameter.
func (c *call) intParam(name string) (int64, bool) {
	n, err := strconv.ParseInt(c.params[name], 10, 64)
	return n, err == nil && n > 0
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
