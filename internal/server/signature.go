package server

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// signaturePrefix starts GitHub's X-Hub-Signature-256 header value.
const signaturePrefix = "sha256="

// Sign returns the X-Hub-Signature-256 value GitHub sends for body under
// secret: "sha256=" and the hex HMAC-SHA256. Tests and the load generator use
// it to sign deliveries.
func Sign(secret, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	return signaturePrefix + hex.EncodeToString(m.Sum(nil))
}

// VerifySignature reports whether header is the X-Hub-Signature-256 of the
// raw body under secret. The comparison is constant-time (hmac.Equal); an
// empty secret never verifies, and neither does a sha1= header.
func VerifySignature(secret, body []byte, header string) bool {
	if len(secret) == 0 || !strings.HasPrefix(header, signaturePrefix) {
		return false
	}
	hexSig := header[len(signaturePrefix):]
	if len(hexSig) != 2*sha256.Size {
		return false
	}
	var got [sha256.Size]byte
	if _, err := hex.Decode(got[:], []byte(hexSig)); err != nil {
		return false
	}
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	return hmac.Equal(got[:], m.Sum(nil))
}
