package appauth

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/fake/fakegithub"
	"github.com/autopilot-dev/autopilot/internal/forge"
)

// TestUnknownInstallationIsErrNoInstallation: the token request for an
// installation GitHub does not know answers 404; CheckInstallation and
// every call through the installation's client return
// forge.ErrNoInstallation (an ErrUnauthorized) naming it, while a known
// installation checks out and its token is the one its client then uses.
func TestUnknownInstallationIsErrNoInstallation(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	g := fakegithub.New(fakegithub.Options{})
	t.Cleanup(g.Close)
	if err := g.AddRepo("acme/widgets"); err != nil {
		t.Fatal(err)
	}
	if err := g.RegisterApp(99, "ap", &key.PublicKey, fakegithub.Installation{ID: 7, Account: "acme", Repos: []string{"acme/widgets"}}); err != nil {
		t.Fatal(err)
	}
	a, err := New(Config{AppID: 99, BaseURL: g.URL(),
		PrivateKey: pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	err = a.CheckInstallation(ctx, 4040)
	if !errors.Is(err, forge.ErrNoInstallation) || !errors.Is(err, forge.ErrUnauthorized) {
		t.Fatalf("CheckInstallation(4040) = %v, want ErrNoInstallation", err)
	}
	resp, err := a.ClientFor(4040).Get(g.URL() + "/repos/acme/widgets")
	if err == nil {
		resp.Body.Close()
	}
	if !errors.Is(err, forge.ErrNoInstallation) {
		t.Fatalf("a call as installation 4040: %v, want ErrNoInstallation", err)
	}
	if err := a.CheckInstallation(ctx, 7); err != nil {
		t.Fatalf("CheckInstallation(7) = %v", err)
	}
	mints := len(g.Requests())
	resp, err = a.ClientFor(7).Get(g.URL() + "/repos/acme/widgets")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := len(g.Requests()) - mints; got != 1 {
		t.Errorf("the call after the check made %d requests, want 1 (the checked token reused)", got)
	}
}
