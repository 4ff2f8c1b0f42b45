// fairrollcheck checks fairroll's checkpoints and proofs with the Go checksum
// database's own code (golang.org/x/mod/sumdb/note and sumdb/tlog), not fairroll's.
//
// It reads one JSON object on stdin:
//
//	{"vkey": "<name>+<hash>+<base64 key>",
//	 "checkpoints": ["<signed note>", ...],
//	 "inclusion": [{"size": N, "index": I, "record": "<base64 entry bytes>", "proof": ["<base64>", ...]}],
//	 "consistency": [{"from": M, "to": N, "proof": ["<base64>", ...]}],
//	 "cosigners": ["<name>+<key ID>+<base64(0x04 || Ed25519 key)>", ...]}
//
// and prints one JSON object: for each item, "" when it verifies, else the error. A
// proof is checked against the root of the checkpoint of its size given in checkpoints.
// For each checkpoint and each cosigner, the cosigner's C2SP tlog-cosignature
// (cosignature/v1) line in the note is checked as that spec defines it, with Go's
// crypto/ed25519 (the note package knows no cosignature type).
package main

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

type inclusion struct {
	Size   int64    `json:"size"`
	Index  int64    `json:"index"`
	Record string   `json:"record"`
	Proof  []string `json:"proof"`
}

type consistency struct {
	From  int64    `json:"from"`
	To    int64    `json:"to"`
	Proof []string `json:"proof"`
}

type input struct {
	Vkey        string        `json:"vkey"`
	Checkpoints []string      `json:"checkpoints"`
	Inclusion   []inclusion   `json:"inclusion"`
	Consistency []consistency `json:"consistency"`
	Cosigners   []string      `json:"cosigners"`
}

type output struct {
	Checkpoints  []string   `json:"checkpoints"`
	Sizes        []int64    `json:"sizes"`
	Inclusion    []string   `json:"inclusion"`
	Consistency  []string   `json:"consistency"`
	Cosignatures [][]string `json:"cosignatures"`
}

// parse reads a tlog-checkpoint body: origin, size, base64 root, then extension lines.
func parse(text string) (int64, tlog.Hash, error) {
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if len(lines) < 3 {
		return 0, tlog.Hash{}, fmt.Errorf("a checkpoint has origin, size and root lines")
	}
	size, err := strconv.ParseInt(lines[1], 10, 64)
	if err != nil || size < 0 || strconv.FormatInt(size, 10) != lines[1] {
		return 0, tlog.Hash{}, fmt.Errorf("bad size %q", lines[1])
	}
	root, err := tlog.ParseHash(lines[2])
	if err != nil {
		return 0, tlog.Hash{}, err
	}
	return size, root, nil
}

func hashes(texts []string) (tlog.TreeProof, error) {
	out := make(tlog.TreeProof, len(texts))
	for i, text := range texts {
		h, err := tlog.ParseHash(text)
		if err != nil {
			return nil, err
		}
		out[i] = h
	}
	return out, nil
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func main() {
	var in input
	if err := json.NewDecoder(os.Stdin).Decode(&in); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	verifier, err := note.NewVerifier(in.Vkey)
	if err != nil {
		fmt.Fprintln(os.Stderr, "verifier key:", err)
		os.Exit(2)
	}
	verifiers := note.VerifierList(verifier)
	roots := map[int64]tlog.Hash{}
	var out output
	for _, text := range in.Checkpoints {
		n, err := note.Open([]byte(text), verifiers)
		size := int64(-1)
		if err == nil {
			var root tlog.Hash
			size, root, err = parse(n.Text)
			if err == nil {
				roots[size] = root
			}
		}
		out.Checkpoints = append(out.Checkpoints, errText(err))
		out.Sizes = append(out.Sizes, size)
		var cosigned []string
		for _, vkey := range in.Cosigners {
			cosigned = append(cosigned, errText(checkCosignature(text, vkey)))
		}
		out.Cosignatures = append(out.Cosignatures, cosigned)
	}
	for _, item := range in.Inclusion {
		out.Inclusion = append(out.Inclusion, errText(checkInclusion(item, roots)))
	}
	for _, item := range in.Consistency {
		out.Consistency = append(out.Consistency, errText(checkConsistency(item, roots)))
	}
	json.NewEncoder(os.Stdout).Encode(out)
}

func checkInclusion(item inclusion, roots map[int64]tlog.Hash) error {
	root, ok := roots[item.Size]
	if !ok {
		return fmt.Errorf("no verified checkpoint of size %d", item.Size)
	}
	record, err := base64.StdEncoding.DecodeString(item.Record)
	if err != nil {
		return err
	}
	proof, err := hashes(item.Proof)
	if err != nil {
		return err
	}
	return tlog.CheckRecord(tlog.RecordProof(proof), item.Size, root, item.Index, tlog.RecordHash(record))
}

func checkConsistency(item consistency, roots map[int64]tlog.Hash) error {
	from, ok := roots[item.From]
	to, ok2 := roots[item.To]
	if !ok || !ok2 {
		return fmt.Errorf("no verified checkpoints of sizes %d and %d", item.From, item.To)
	}
	proof, err := hashes(item.Proof)
	if err != nil {
		return err
	}
	return tlog.CheckTree(proof, item.To, to, item.From, from)
}

// checkCosignature checks the cosignature/v1 line of the cosigner vkey in a note: key ID
// SHA-256(name || "\n" || 0x04 || key)[:4], then a u64 big-endian time and the Ed25519
// signature of "cosignature/v1\ntime <t>\n" followed by the note's body.
func checkCosignature(text, vkey string) error {
	parts := strings.SplitN(vkey, "+", 3)
	if len(parts) != 3 {
		return fmt.Errorf("bad cosigner key %q", vkey)
	}
	name := parts[0]
	raw, err := base64.StdEncoding.DecodeString(parts[2])
	if err != nil || len(raw) != 33 || raw[0] != 0x04 {
		return fmt.Errorf("not an Ed25519 cosignature key")
	}
	key := raw[1:]
	sum := sha256.Sum256(append([]byte(name+"\n\x04"), key...))
	body, signatures, found := strings.Cut(text, "\n\n")
	if !found {
		return fmt.Errorf("a note has a blank line before its signatures")
	}
	for _, line := range strings.Split(signatures, "\n") {
		prefix := "\u2014 " + name + " "
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		sig, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(line, prefix))
		if err != nil || len(sig) != 76 || !bytes.Equal(sig[:4], sum[:4]) {
			continue
		}
		stamp := binary.BigEndian.Uint64(sig[4:12])
		message := fmt.Sprintf("cosignature/v1\ntime %d\n%s\n", stamp, body)
		if !ed25519.Verify(ed25519.PublicKey(key), []byte(message), sig[12:]) {
			return fmt.Errorf("the cosignature of %s does not verify", name)
		}
		return nil
	}
	return fmt.Errorf("no cosignature of %s", name)
}
