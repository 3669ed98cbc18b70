package dashboard

import (
	"context"
	"net/http"
)

// SignIn is GitHub sign-in (placeholder until the OAuth flow lands).
type SignIn struct{}

type session struct{ Login string }

func (s *SignIn) user(*http.Request) (*session, bool)                { return nil, false }
func (s *SignIn) canRead(context.Context, *session, string) bool     { return false }
func (d *Dashboard) login(w http.ResponseWriter, r *http.Request)    {}
func (d *Dashboard) callback(w http.ResponseWriter, r *http.Request) {}
func (d *Dashboard) logout(w http.ResponseWriter, r *http.Request)   {}
