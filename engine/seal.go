package engine

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"sync"

	"golang.org/x/crypto/nacl/box"
)

// Answers to secret questions cross processes sealed. The process that
// executes the run makes an X25519 key pair per secret question: the public
// half is stored with the question, the private half stays in this
// process's memory (keyRing). Whichever process takes the answer (an MCP
// request, the dashboard, the CLI) seals it to the public key with an
// anonymous NaCl box before writing it, so the database only ever holds
// ciphertext. If the executing process stops, its private keys are gone and
// the answer can no longer be opened: the run fails as interrupted, as runs
// with secret inputs do.

// sealedAnswer is how a sealed response is stored.
type sealedAnswer struct {
	Sealed []byte `json:"sealed"`
}

// keyRing holds the private keys of the secret questions asked here.
type keyRing struct {
	mu   sync.Mutex
	keys map[string]*[32]byte
}

func newKeyRing() *keyRing { return &keyRing{keys: map[string]*[32]byte{}} }

func ringKey(runID, requestID string) string { return runID + "\x00" + requestID }

// generate makes a key pair for a question, keeps the private half and
// returns the public one.
func (k *keyRing) generate(runID, requestID string) ([]byte, error) {
	pub, priv, err := box.GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate input key: %w", err)
	}
	k.mu.Lock()
	k.keys[ringKey(runID, requestID)] = priv
	k.mu.Unlock()
	return pub[:], nil
}

// forget drops a question's private key (its answer was opened, or the run
// stopped asking).
func (k *keyRing) forget(runID, requestID string) {
	k.mu.Lock()
	delete(k.keys, ringKey(runID, requestID))
	k.mu.Unlock()
}

// open returns the clear answer of a sealed response. ok is false when this
// process holds no key for the question or the box does not open.
func (k *keyRing) open(runID, requestID string, pub, stored []byte) (json.RawMessage, bool) {
	k.mu.Lock()
	priv := k.keys[ringKey(runID, requestID)]
	k.mu.Unlock()
	var s sealedAnswer
	if priv == nil || len(pub) != 32 || json.Unmarshal(stored, &s) != nil {
		return nil, false
	}
	out, ok := box.OpenAnonymous(nil, s.Sealed, (*[32]byte)(pub), priv)
	return out, ok
}

// sealAnswer seals a response to a question's public key.
func sealAnswer(pub []byte, response json.RawMessage) (json.RawMessage, error) {
	if len(pub) != 32 {
		return nil, fmt.Errorf("the question's public key has %d bytes, want 32", len(pub))
	}
	sealed, err := box.SealAnonymous(nil, response, (*[32]byte)(pub), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("seal answer: %w", err)
	}
	return json.Marshal(sealedAnswer{Sealed: sealed})
}
