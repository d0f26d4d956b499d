package templates

// crawlLinksRead bounds the distinct links of one page the crawl frontier
// reads (crawl_site, extract_structured with startUrl): every link up to
// it, not the maxLinksPerPage that pages.json lists, so a page such as a
// book index with 1256 links leads to all of them. A page with more says
// so in its linksCapped (read). The links of one page are held only while
// that page is finished: the frontier keeps the new ones, at most the
// places left under maxPages.
const crawlLinksRead = 100000

// linksCap is a page's linksCapped: how its links were cut. Found is the
// number of distinct links on the page, Kept how many its links list
// holds (maxLinksPerPage at most; 0 when the inputs did not ask for
// links), Read, in a crawl, how many the frontier read (crawlLinksRead at
// most). It is set only when a cut left some out.
type linksCap struct {
	Found int `json:"found"`
	Kept  int `json:"kept"`
	Read  int `json:"read,omitempty"`
}

// linksCapOf is the linksCapped of a page with found distinct links of
// which kept are listed; nil when none was left out.
func linksCapOf(found, kept int) *linksCap {
	if found <= kept {
		return nil
	}
	return &linksCap{Found: found, Kept: kept}
}

// cutCrawlLinks cuts a crawled page's links, which the frontier has read
// (up to crawlLinksRead), to what pages.json lists: the first
// maxLinksPerPage when listed (include), none otherwise; linksCapped and
// linksTruncated then say what was left out, of the page and of the
// frontier's reading.
func cutCrawlLinks(p *pageOut, include bool) {
	found, read := max(p.linksFound, len(p.Links)), len(p.Links)
	kept := 0
	if include {
		kept = min(read, maxLinksPerPage)
		p.Links = p.Links[:kept]
	} else {
		p.Links = nil
	}
	p.LinksTruncated, p.LinksCapped = include && found > kept, nil
	if (include && found > kept) || found > read {
		p.LinksCapped = &linksCap{Found: found, Kept: kept, Read: read}
	}
}
