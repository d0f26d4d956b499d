package acceptance

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/browsertask/browsertask/internal/fixture"
)

// TestBlackboxMapSite (issue 30, acceptance 2): map_site through the
// built binary over MCP lists the generated site's pages breadth first,
// every URL with its title and depth, urls.json holding them all, and
// the daemon starts no browser for it (no process under it).
func TestBlackboxMapSite(t *testing.T) {
	t.Parallel()
	fx := fixture.New(t)
	p := startServe(t)
	cs := connectHTTP(t, p, nil)
	res := runOK(t, cs, "map_site", "", obj{"startUrl": fx.URL("/big/0"), "maxPages": 300})
	if s := sub(res, "summary"); num(s, "total") != 300 || num(s, "failed") != 0 {
		t.Fatalf("summary %v", s)
	}
	if rob := sub(res, "robots"); rob["respected"] != true || rob["userAgent"] != "browsertask" {
		t.Fatalf("robots %v", rob)
	}
	data, _, _ := readArtifact(t, cs, res["artifactId"].(string), 0, 1<<20)
	var urls []struct {
		URL    string `json:"url"`
		Title  string `json:"title"`
		Depth  int    `json:"depth"`
		Source string `json:"source"`
	}
	if err := json.Unmarshal(data, &urls); err != nil || len(urls) != 300 {
		t.Fatalf("urls.json: %d URLs, %v", len(urls), err)
	}
	// Breadth first: the first 300 pages of the generated site, in order.
	for n, u := range urls {
		if u.URL != fx.URL(fmt.Sprintf("/big/%d", n)) || u.Title != fmt.Sprintf("Big %d", n) || u.Depth != fixture.BigSiteDepth(n) {
			t.Fatalf("URL %d: %+v", n, u)
		}
	}
	if kids := descendants(p.cmd.Process.Pid); len(kids) != 0 {
		t.Fatalf("map_site started processes under the daemon: %v", kids)
	}
}
