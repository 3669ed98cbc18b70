package fakegithub

import (
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Installation is one installation of a registered App.
type Installation struct {
	ID int64
	// Account is the owner login the App is installed on.
	Account string
	// Repos are the selected repositories ("owner/name"); empty means all
	// repositories of Account.
	Repos []string
}

func (s *Server) addActionsApp() {
	a := &app{id: ActionsAppID, slug: ActionsAppSlug, name: "GitHub Actions", created: s.now()}
	a.bot = &user{login: ActionsBotLogin, id: ActionsBotID, typ: "Bot", appID: ActionsAppID}
	s.users[strings.ToLower(ActionsBotLogin)] = a.bot
	s.apps[a.id] = a
}

// RegisterApp registers a GitHub App whose JWTs are signed by the private
// half of key, with its installations. Its installation tokens act as
// "<slug>[bot]" (type Bot).
func (s *Server) RegisterApp(appID int64, slug string, key *rsa.PublicKey, installs ...Installation) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.apps[appID] != nil || appID <= 0 || key == nil || slug == "" {
		return fmt.Errorf("fakegithub: register app %d %q: duplicate id, missing key or slug", appID, slug)
	}
	a := &app{id: appID, slug: slug, name: slug, key: key, created: s.now()}
	for _, in := range installs {
		for _, other := range s.apps {
			for _, o := range other.installations {
				if o.id == in.ID {
					return fmt.Errorf("fakegithub: register app %d: installation %d already exists", appID, in.ID)
				}
			}
		}
		a.installations = append(a.installations, &installation{id: in.ID, app: a, account: in.Account, repos: in.Repos})
	}
	a.bot = s.user(slug+"[bot]", "Bot")
	a.bot.appID = appID
	s.apps[appID] = a
	return nil
}

// verifyJWT checks an App JWT like GitHub: RS256 signed by the App's key,
// iss = app id, exp in the future but at most 10 minutes ahead, iat not in
// the future (60 s of skew allowed). Called with s.mu held.
func (s *Server) verifyJWT(r *http.Request) (*app, reply) {
	undecodable := errorReply(http.StatusUnauthorized, "A JSON web token could not be decoded", docRoot)
	_, tok, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	parts := strings.Split(strings.TrimSpace(tok), ".")
	if len(parts) != 3 {
		return nil, undecodable
	}
	var head struct {
		Alg string `json:"alg"`
	}
	var claims struct {
		Iss json.RawMessage `json:"iss"`
		Iat json.Number     `json:"iat"`
		Exp json.Number     `json:"exp"`
	}
	if decodeSegment(parts[0], &head) != nil || head.Alg != "RS256" || decodeSegment(parts[1], &claims) != nil {
		return nil, undecodable
	}
	appID, err := strconv.ParseInt(strings.Trim(string(claims.Iss), `"`), 10, 64)
	a := s.apps[appID]
	if err != nil || a == nil || a.key == nil {
		return nil, errorReply(http.StatusUnauthorized, "Integration not found", docRoot)
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err != nil || rsa.VerifyPKCS1v15(a.key, crypto.SHA256, digest[:], sig) != nil {
		return nil, undecodable
	}
	now := s.authClock().Unix()
	exp, errExp := claims.Exp.Int64()
	iat, errIat := claims.Iat.Int64()
	switch {
	case errExp != nil || exp <= now:
		return nil, errorReply(http.StatusUnauthorized, "'Expiration time' claim ('exp') must be a numeric value representing the future time at which the assertion expires", docRoot)
	case exp > now+int64((10*time.Minute+time.Minute)/time.Second):
		return nil, errorReply(http.StatusUnauthorized, "'Expiration time' claim ('exp') is too far in the future", docRoot)
	case errIat != nil || iat > now+60:
		return nil, errorReply(http.StatusUnauthorized, "'Issued at' claim ('iat') must be an Integer representing the time that the assertion was issued", docRoot)
	}
	return a, reply{}
}

func decodeSegment(seg string, v any) error {
	b, err := base64.RawURLEncoding.DecodeString(seg)
	if err != nil {
		return err
	}
	d := json.NewDecoder(strings.NewReader(string(b)))
	d.UseNumber()
	return d.Decode(v)
}

func (s *Server) getApp(c *call) reply {
	o := s.appJSON(c.app)
	o["installations_count"] = len(c.app.installations)
	return ok(o)
}

func (s *Server) installationJSON(in *installation) obj {
	sel := "selected"
	if len(in.repos) == 0 {
		sel = "all"
	}
	acct := s.user(in.account, "Organization")
	return obj{
		"id": in.id, "account": s.userJSON(acct), "repository_selection": sel,
		"access_tokens_url": s.api("/app/installations/%d/access_tokens", in.id),
		"repositories_url":  s.api("/installation/repositories"),
		"html_url":          fmt.Sprintf("%s/organizations/%s/settings/installations/%d", s.webURL, in.account, in.id),
		"app_id":            in.app.id, "app_slug": in.app.slug, "target_id": acct.id, "target_type": acct.typ,
		"permissions": s.appJSON(in.app)["permissions"], "events": s.appJSON(in.app)["events"],
		"created_at": stamp(in.app.created), "updated_at": stamp(in.app.created), "suspended_at": nil,
	}
}

func (s *Server) listInstallations(c *call) reply {
	return paged(s, c, c.app.installations, s.installationJSON)
}

func (s *Server) getRepoInstallation(c *call) reply {
	full := c.params["owner"] + "/" + c.params["repo"]
	if rp := s.repos[strings.ToLower(full)]; rp != nil {
		for _, in := range c.app.installations {
			if in.covers(rp.fullName()) {
				return ok(s.installationJSON(in))
			}
		}
	}
	return notFound()
}

// createInstallationToken mints a one-hour token acting as "<slug>[bot]",
// limited to the installation's repositories.
func (s *Server) createInstallationToken(c *call) reply {
	id, _ := c.intParam("id")
	var in *installation
	for _, i := range c.app.installations {
		if i.id == id {
			in = i
		}
	}
	if in == nil {
		// An installation GitHub does not know, or another App's.
		return errorReply(http.StatusNotFound, "Not Found",
			"https://docs.github.com/rest/apps/apps#create-an-installation-access-token-for-an-app")
	}
	var repos []string
	for _, rp := range s.repos {
		if in.covers(rp.fullName()) {
			repos = append(repos, rp.fullName())
		}
	}
	if len(repos) == 0 {
		repos = []string{"\x00none"} // an installation without repositories sees nothing
	}
	tok := fmt.Sprintf("ghs_%036d", s.newID())
	expires := s.authClock().Add(time.Hour).UTC().Truncate(time.Second)
	s.addToken(tok, Identity{Login: c.app.bot.login, Type: "Bot", AppID: c.app.id,
		InstallationID: in.id, Repos: repos, ExpiresAt: expires})
	sel := s.installationJSON(in)["repository_selection"]
	return created(obj{"token": tok, "expires_at": stamp(expires),
		"permissions": s.appJSON(c.app)["permissions"], "repository_selection": sel})
}
