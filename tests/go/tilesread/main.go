// tilesread reads a fairroll table's log as C2SP tlog-tiles over HTTP with the Go
// checksum database's own code (golang.org/x/mod/sumdb/note and sumdb/tlog), not
// fairroll's: a server's /v1/tables/<table>/log, or a mirror of it on a static host.
//
// It reads one JSON object on stdin:
//
//	{"prefix": "http://host/v1/tables/t/log", "vkey": "<name>+<hash>+<base64 key>",
//	 "origin": "fairroll/t", "index": I, "old": "<an earlier checkpoint note>"}
//
// fetches <prefix>/checkpoint and checks its signature under vkey and its origin, then
// with tlog.TileHashReader over <prefix>/tile/<L>/<N>[.p/<W>] proves record I (leaf
// I = seq I+1) in that tree, reading the record from its entry bundle
// (<prefix>/tile/entries/<N>[.p/<W>], uint16-framed), and proves the old checkpoint's
// tree a prefix of it. It prints one JSON object: the size, the record (base64), and
// for each check "" when it holds, else the error.
package main

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

type input struct {
	Prefix string `json:"prefix"`
	Vkey   string `json:"vkey"`
	Origin string `json:"origin"`
	Index  int64  `json:"index"`
	Old    string `json:"old"`
}

type output struct {
	Size        int64  `json:"size"`
	Record      string `json:"record"`
	Checkpoint  string `json:"checkpoint"`
	Inclusion   string `json:"inclusion"`
	Consistency string `json:"consistency"`
}

// path is a tile's C2SP tlog-tiles path: unlike Go's sumdb paths it carries no height,
// and an entry bundle (level -1) is "entries", not "data".
func path(t tlog.Tile) string {
	n := strconv.FormatInt(t.N, 10)
	for len(n)%3 != 0 {
		n = "0" + n
	}
	var groups []string
	for i := 0; i < len(n); i += 3 {
		groups = append(groups, n[i:i+3])
	}
	for i := 0; i < len(groups)-1; i++ {
		groups[i] = "x" + groups[i]
	}
	level := strconv.Itoa(t.L)
	if t.L == -1 {
		level = "entries"
	}
	p := "tile/" + level + "/" + strings.Join(groups, "/")
	if t.W != 1<<uint(t.H) {
		p += ".p/" + strconv.Itoa(t.W)
	}
	return p
}

func fetch(url string) ([]byte, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return io.ReadAll(resp.Body)
}

type reader struct{ prefix string }

func (r reader) Height() int { return 8 }

func (r reader) ReadTiles(tiles []tlog.Tile) ([][]byte, error) {
	out := make([][]byte, len(tiles))
	for i, t := range tiles {
		data, err := fetch(r.prefix + "/" + path(t))
		if err != nil {
			return nil, err
		}
		out[i] = data
	}
	return out, nil
}

func (r reader) SaveTiles([]tlog.Tile, [][]byte) {}

// open checks a checkpoint note under the verifier and its origin; returns its tree.
func open(text string, verifier note.Verifier, origin string) (tlog.Tree, error) {
	n, err := note.Open([]byte(text), note.VerifierList(verifier))
	if err != nil {
		return tlog.Tree{}, err
	}
	lines := strings.Split(strings.TrimSuffix(n.Text, "\n"), "\n")
	if len(lines) < 3 || lines[0] != origin {
		return tlog.Tree{}, fmt.Errorf("not a checkpoint of %s", origin)
	}
	size, err := strconv.ParseInt(lines[1], 10, 64)
	if err != nil || strconv.FormatInt(size, 10) != lines[1] {
		return tlog.Tree{}, fmt.Errorf("bad size %q", lines[1])
	}
	root, err := tlog.ParseHash(lines[2])
	if err != nil {
		return tlog.Tree{}, err
	}
	return tlog.Tree{N: size, Hash: root}, nil
}

func text(err error) string {
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
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var out output
	raw, err := fetch(in.Prefix + "/checkpoint")
	var tree tlog.Tree
	if err == nil {
		tree, err = open(string(raw), verifier, in.Origin)
	}
	out.Checkpoint = text(err)
	out.Size = tree.N
	if err == nil {
		hashes := tlog.TileHashReader(tree, reader{in.Prefix})
		out.Inclusion = text(include(in, tree, hashes, &out))
		out.Consistency = text(consistent(in, tree, verifier, hashes))
	}
	json.NewEncoder(os.Stdout).Encode(out)
}

// include reads record in.Index from its bundle and proves it in the tree.
func include(in input, tree tlog.Tree, hashes tlog.HashReader, out *output) error {
	bundle := tlog.Tile{H: 8, L: -1, N: in.Index / 256, W: 256}
	if last := tree.N / 256; bundle.N == last {
		bundle.W = int(tree.N % 256)
	}
	data, err := fetch(in.Prefix + "/" + path(bundle))
	if err != nil {
		return err
	}
	var record []byte
	for i := int64(0); len(data) > 0; i++ {
		if len(data) < 2 {
			return fmt.Errorf("a bundle ends inside a length")
		}
		size := int(binary.BigEndian.Uint16(data))
		if len(data) < 2+size {
			return fmt.Errorf("a bundle ends inside an entry")
		}
		if bundle.N*256+i == in.Index {
			record = data[2 : 2+size]
		}
		data = data[2+size:]
	}
	if record == nil {
		return fmt.Errorf("record %d is not in its bundle", in.Index)
	}
	out.Record = base64.StdEncoding.EncodeToString(record)
	proof, err := tlog.ProveRecord(tree.N, in.Index, hashes)
	if err != nil {
		return err
	}
	return tlog.CheckRecord(proof, tree.N, tree.Hash, in.Index, tlog.RecordHash(record))
}

// consistent proves the old checkpoint's tree a prefix of the tree.
func consistent(in input, tree tlog.Tree, verifier note.Verifier, hashes tlog.HashReader) error {
	old, err := open(in.Old, verifier, in.Origin)
	if err != nil {
		return err
	}
	proof, err := tlog.ProveTree(tree.N, old.N, hashes)
	if err != nil {
		return err
	}
	return tlog.CheckTree(proof, tree.N, tree.Hash, old.N, old.Hash)
}
