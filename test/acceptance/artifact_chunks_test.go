package acceptance

// Acceptance 9: get_artifact reads pages.json of a 300-page run in chunks
// that reassemble to the exact bytes (default and small odd lengths), and a
// binary artifact comes back as base64 of the exact bytes.

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"testing"
	"time"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/browsertask/browsertask/internal/fixture"
)

// readArtifact reads a whole artifact with chunks of length (0 = default),
// checking every chunk's fields, and returns the decoded bytes, the mime
// type and the number of chunks.
func readArtifact(t *testing.T, cs *sdk.ClientSession, id string, length, maxChunkSize int64) ([]byte, string, int) {
	t.Helper()
	var buf bytes.Buffer
	var off, total int64 = 0, -1
	mime := ""
	chunks := 0
	for {
		args := obj{"artifactId": id, "offset": off}
		if length > 0 {
			args["length"] = length
		}
		c := callOK(t, cs, "get_artifact", args)
		chunks++
		n := num(c, "length")
		if total < 0 {
			total, mime = num(c, "totalSize"), c["mimeType"].(string)
		}
		if c["artifactId"] != id || num(c, "offset") != off || num(c, "totalSize") != total || c["mimeType"] != mime {
			t.Fatalf("chunk at %d: inconsistent fields %v/%v/%v/%v", off, c["artifactId"], c["offset"], c["totalSize"], c["mimeType"])
		}
		if n < 1 || (length > 0 && n > length+3) || n > maxChunkSize {
			t.Fatalf("chunk at %d: length %d for a request of %d", off, n, length)
		}
		if c["complete"] != (off+n == total) {
			t.Fatalf("chunk at %d: complete %v with offset+length %d of %d", off, c["complete"], off+n, total)
		}
		data := c["data"].(string)
		if text := isTextMime(mime); text {
			if !utf8.ValidString(data) || int64(len(data)) != n {
				t.Fatalf("text chunk at %d: %d bytes of data for length %d (valid UTF-8: %v)", off, len(data), n, utf8.ValidString(data))
			}
			buf.WriteString(data)
		} else {
			b, err := base64.StdEncoding.DecodeString(data)
			if err != nil || int64(len(b)) != n {
				t.Fatalf("binary chunk at %d: base64 decode: %v, %d bytes for length %d", off, err, len(b), n)
			}
			buf.Write(b)
		}
		off += n
		if c["complete"] == true {
			break
		}
	}
	if int64(buf.Len()) != total {
		t.Fatalf("read %d bytes, totalSize %d", buf.Len(), total)
	}
	return buf.Bytes(), mime, chunks
}

func isTextMime(m string) bool {
	return len(m) >= 5 && m[:5] == "text/" || bytes.HasPrefix([]byte(m), []byte("application/json"))
}

func TestBlackboxArtifactChunks(t *testing.T) {
	fixture.NeedChromium(t)
	t.Parallel()
	fx := fixture.New(t)
	// A smaller server chunk size makes the default-length read span several
	// chunks (pages.json of 300 pages is ~150 KB, under the 256 KiB default).
	const maxChunk = 40000
	cs, _ := startStdio(t, "--artifact-max-chunk-size", fmt.Sprint(maxChunk))

	const n = 300
	urls := make([]any, n)
	for i := range urls {
		urls[i] = fx.URL(fmt.Sprintf("/page/%d", i+1))
	}
	start := time.Now()
	run := callOK(t, cs, "run_task_template", obj{"templateId": "batch_extract_pages",
		"inputs": obj{"urls": urls, "concurrency": 8, "includeLinks": true, "includeMeta": true,
			"fields": obj{"name": "#name", "price": ".price"}},
		"options": obj{"mode": "sync", "timeoutMs": 240000}})
	t.Logf("300 pages in %v", time.Since(start))
	if run["status"] != "succeeded" {
		t.Fatalf("300-page run: %v %v", run["status"], run["error"])
	}
	res := sub(run, "result")
	art, _ := res["artifactId"].(string)
	if ids, _ := run["artifactIds"].([]any); len(ids) != 1 || ids[0] != art {
		t.Fatalf("result.artifactId %q, artifactIds %v", art, run["artifactIds"])
	}

	whole, mime, c1 := readArtifact(t, cs, art, 0, maxChunk)
	odd, _, c2 := readArtifact(t, cs, art, 1000, maxChunk)
	big, _, c3 := readArtifact(t, cs, art, 1<<30, maxChunk) // clamped to maxChunk
	if !bytes.Equal(whole, big) || c3 != c1 {
		t.Fatalf("a length above artifactMaxChunkSize must be clamped: %d chunks vs %d default", c3, c1)
	}
	t.Logf("pages.json: %d bytes, %s, %d default chunks, %d chunks of 1000", len(whole), mime, c1, c2)
	if !bytes.Equal(whole, odd) {
		t.Fatalf("default-length and 1000-byte reads reassemble to different bytes")
	}
	if mime != "application/json" && !bytes.HasPrefix([]byte(mime), []byte("application/json")) {
		t.Errorf("pages.json mimeType: %s", mime)
	}
	if want := (len(whole) + maxChunk - 1) / maxChunk; c1 < want || c1 > want+1 {
		t.Errorf("a %d-byte artifact came in %d default chunk(s)", len(whole), c1)
	}
	var doc any
	if err := json.Unmarshal(whole, &doc); err != nil {
		t.Fatalf("pages.json does not parse: %v", err)
	}
	var pages []any
	switch d := doc.(type) {
	case []any:
		pages = d
	case obj:
		pages, _ = d["pages"].([]any)
	}
	if len(pages) != n {
		t.Fatalf("pages.json: want %d pages, got %d", n, len(pages))
	}
	for i, x := range pages {
		p := x.(obj)
		want := fmt.Sprintf("Page %d", i+1)
		if p["url"] != urls[i] || p["title"] != want || p["error"] != nil {
			t.Fatalf("pages.json[%d]: want %s %q, got url %v title %v error %v", i, urls[i], want, p["url"], p["title"], p["error"])
		}
		if f := sub(p, "fields"); f["name"] != fmt.Sprintf("Item %d", i+1) || f["price"] != fmt.Sprintf("%d.00", i+1) {
			t.Fatalf("pages.json[%d].fields: %v", i, f)
		}
	}
	// The run's own result lists the pages too, in input order: as many
	// whole pages as fit the reply budget, pages.json has them all.
	rp, _ := res["pages"].([]any)
	if len(rp) == n {
		if rp[n-1].(obj)["url"] != urls[n-1] {
			t.Errorf("result.pages: last %v", rp[n-1])
		}
	} else if res["truncated"] != true || num(res, "itemsTotal") != int64(n) || num(res, "itemsInline") != int64(len(rp)) ||
		len(rp) == 0 || rp[len(rp)-1].(obj)["url"] != urls[len(rp)-1] || res["artifactId"] != art {
		t.Errorf("result.pages: %d pages, truncated %v, itemsInline %v of %v, artifactId %v", len(rp), res["truncated"], res["itemsInline"], res["itemsTotal"], res["artifactId"])
	}

	// Binary artifact: base64 chunks decoding to the exact random bytes.
	raw := make([]byte, 70001)
	if _, err := rand.Read(raw); err != nil {
		t.Fatal(err)
	}
	bin := callOK(t, cs, "run_task_template", obj{"templateId": "dev_echo",
		"inputs":  obj{"contentBase64": base64.StdEncoding.EncodeToString(raw), "mimeType": "application/octet-stream"},
		"options": obj{"mode": "sync"}})
	if bin["status"] != "succeeded" {
		t.Fatalf("binary run: %v %v", bin["status"], bin["error"])
	}
	bid := bin["artifactIds"].([]any)[0].(string)
	for _, length := range []int64{0, 999, maxChunk} {
		got, mime, chunks := readArtifact(t, cs, bid, length, maxChunk)
		if mime != "application/octet-stream" || !bytes.Equal(got, raw) {
			t.Fatalf("binary read with length %d: mime %s, %d bytes, equal %v", length, mime, len(got), bytes.Equal(got, raw))
		}
		if length > 0 && chunks != (len(raw)+int(length)-1)/int(length) {
			t.Errorf("binary read with length %d: %d chunks, want exact byte chunks", length, chunks)
		}
	}
	c := callOK(t, cs, "get_artifact", obj{"artifactId": bid, "offset": 1, "length": 3})
	if d, _ := base64.StdEncoding.DecodeString(c["data"].(string)); !bytes.Equal(d, raw[1:4]) || num(c, "length") != 3 {
		t.Errorf("binary chunk at an odd offset: %v", c)
	}
}
