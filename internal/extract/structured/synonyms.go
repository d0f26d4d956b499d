package structured

import (
	"strings"
	"unicode"
)

// lookup says where a property's value may be found: paths inside a
// structured-data entity (dot paths of schema.org property names, tried in
// order) and meta keys (tried in order). Meta keys are lowercase; the
// pseudo-keys "html:title", "link:canonical", "html:lang" and "page:url"
// name the page's <title>, canonical link, language and final URL.
type lookup struct {
	paths []string
	meta  []string
}

// synonymGroups lists the synonym groups: every name in names (compared after normKey) reads from
// the same places. A property whose name is in no group reads its own name
// from entities (matched after normKey, so "date_published" finds
// "datePublished") and the meta keys NAME, og:NAME, product:NAME,
// article:NAME and twitter:NAME.
func synonymGroups() []synonymGroup {
	return []synonymGroup{
		{[]string{"name", "productname", "itemname"}, lookup{
			[]string{"name", "headline", "title"},
			[]string{"og:title", "twitter:title", "html:title"}}},
		{[]string{"title", "headline", "pagetitle"}, lookup{
			[]string{"headline", "name", "title"},
			[]string{"og:title", "twitter:title", "html:title"}}},
		{[]string{"description", "summary", "abstract"}, lookup{
			[]string{"description", "abstract"},
			[]string{"og:description", "description", "twitter:description"}}},
		{[]string{"price", "amount", "cost", "currentprice", "saleprice"}, lookup{
			[]string{"price", "offers.price", "offers.lowPrice", "offers.priceSpecification.price", "priceSpecification.price", "lowPrice"},
			[]string{"product:price:amount", "og:price:amount", "product:price", "price"}}},
		{[]string{"lowprice", "minprice"}, lookup{
			[]string{"lowPrice", "offers.lowPrice", "offers.price", "price"},
			[]string{"product:price:amount", "og:price:amount"}}},
		{[]string{"highprice", "maxprice"}, lookup{
			[]string{"highPrice", "offers.highPrice", "offers.price", "price"},
			[]string{"product:price:amount", "og:price:amount"}}},
		{[]string{"currency", "pricecurrency", "currencycode"}, lookup{
			[]string{"priceCurrency", "offers.priceCurrency", "offers.priceSpecification.priceCurrency", "priceSpecification.priceCurrency", "currency"},
			[]string{"product:price:currency", "og:price:currency"}}},
		{[]string{"rating", "ratingvalue", "averagerating", "stars", "score"}, lookup{
			[]string{"aggregateRating.ratingValue", "ratingValue", "reviewRating.ratingValue", "rating", "aggregateRating"},
			[]string{"og:rating", "product:rating", "rating"}}},
		{[]string{"reviewcount", "numberofreviews", "reviewscount", "numreviews"}, lookup{
			[]string{"aggregateRating.reviewCount", "aggregateRating.ratingCount", "reviewCount"},
			nil}},
		{[]string{"ratingcount", "numberofratings", "ratingscount"}, lookup{
			[]string{"aggregateRating.ratingCount", "aggregateRating.reviewCount", "ratingCount"},
			nil}},
		{[]string{"bestrating", "maxrating"}, lookup{
			[]string{"aggregateRating.bestRating", "bestRating"}, nil}},
		{[]string{"aggregaterating"}, lookup{[]string{"aggregateRating"}, nil}},
		{[]string{"image", "imageurl", "photo", "picture", "thumbnail", "thumbnailurl", "images", "mainimage"}, lookup{
			[]string{"image", "image.url", "image.contentUrl", "thumbnailUrl", "photo", "thumbnail"},
			[]string{"og:image", "og:image:url", "og:image:secure_url", "twitter:image", "twitter:image:src"}}},
		{[]string{"url", "link", "href", "canonical", "canonicalurl", "pageurl", "permalink"}, lookup{
			[]string{"url"},
			[]string{"og:url", "link:canonical", "page:url"}}},
		{[]string{"brand", "brandname", "manufacturer", "make"}, lookup{
			[]string{"brand.name", "brand", "manufacturer.name", "manufacturer"},
			[]string{"product:brand", "og:brand", "brand"}}},
		{[]string{"sku", "productid", "itemid", "articlenumber"}, lookup{
			[]string{"sku", "offers.sku", "productID", "mpn"},
			[]string{"product:retailer_item_id", "product:sku", "sku"}}},
		{[]string{"mpn"}, lookup{[]string{"mpn", "offers.mpn"}, []string{"product:mfr_part_no"}}},
		{[]string{"gtin", "ean", "upc", "barcode", "gtin13", "gtin12", "gtin14", "gtin8"}, lookup{
			[]string{"gtin", "gtin13", "gtin12", "gtin14", "gtin8", "offers.gtin", "offers.gtin13", "offers.gtin12"},
			[]string{"product:ean", "product:upc", "product:gtin"}}},
		{[]string{"availability", "stock", "instock", "stockstatus", "available", "isavailable"}, lookup{
			[]string{"offers.availability", "availability"},
			[]string{"product:availability", "og:availability", "availability"}}},
		{[]string{"condition", "itemcondition"}, lookup{
			[]string{"offers.itemCondition", "itemCondition"},
			[]string{"product:condition", "og:condition"}}},
		{[]string{"datepublished", "published", "publishdate", "publishedat", "publishedtime", "publicationdate", "date", "pubdate", "releasedate", "uploaddate"}, lookup{
			[]string{"datePublished", "dateCreated", "uploadDate", "releaseDate"},
			[]string{"article:published_time", "og:published_time", "published_time", "date", "pubdate", "dc.date", "dcterms.date"}}},
		{[]string{"datemodified", "modified", "updated", "updatedat", "lastmodified", "modifiedtime"}, lookup{
			[]string{"dateModified"},
			[]string{"article:modified_time", "og:updated_time", "last-modified"}}},
		{[]string{"author", "authorname", "byline", "creator", "writer"}, lookup{
			[]string{"author.name", "author", "creator.name", "creator"},
			[]string{"author", "article:author", "twitter:creator"}}},
		{[]string{"publisher", "publishername"}, lookup{
			[]string{"publisher.name", "publisher"},
			[]string{"og:site_name"}}},
		{[]string{"sitename", "site", "website"}, lookup{
			[]string{"publisher.name"},
			[]string{"og:site_name", "application-name"}}},
		{[]string{"category", "section", "articlesection"}, lookup{
			[]string{"category", "articleSection", "offers.category"},
			[]string{"article:section", "product:category"}}},
		{[]string{"keywords", "tags"}, lookup{
			[]string{"keywords"},
			[]string{"keywords", "article:tag", "news_keywords"}}},
		{[]string{"language", "lang", "inlanguage", "locale"}, lookup{
			[]string{"inLanguage"},
			[]string{"html:lang", "og:locale", "content-language"}}},
		{[]string{"seller", "sellername", "merchant", "vendor", "retailer", "store"}, lookup{
			[]string{"offers.seller.name", "offers.seller", "seller.name", "seller"},
			nil}},
		{[]string{"offers", "offer", "pricing"}, lookup{[]string{"offers"}, nil}},
		{[]string{"reviews", "review"}, lookup{[]string{"review", "reviews"}, nil}},
	}
}

// synonymGroup is one set of names that read from the same places.
type synonymGroup struct {
	names []string
	at    lookup
}

// synonymIndex maps a normalized property name to its lookup.
type synonymIndex map[string]lookup

// newSynonymIndex indexes synonymGroups.
func newSynonymIndex() synonymIndex {
	idx := synonymIndex{}
	for _, g := range synonymGroups() {
		for _, n := range g.names {
			idx[n] = g.at
		}
	}
	return idx
}

// forName returns where a property called name is looked for: its own
// name first, then the group's places (or the default places).
func (idx synonymIndex) forName(name string) lookup {
	at, ok := idx[normKey(name)]
	if !ok {
		low := strings.ToLower(name)
		return lookup{
			paths: []string{name},
			meta:  []string{low, "og:" + low, "product:" + low, "article:" + low, "twitter:" + low},
		}
	}
	out := lookup{paths: []string{name}, meta: at.meta}
	for _, p := range at.paths {
		if p != name {
			out.paths = append(out.paths, p)
		}
	}
	return out
}

// normKey lowercases s and drops everything but letters and digits:
// "date_published", "datePublished" and "Date-Published" are one key.
func normKey(s string) string {
	var b strings.Builder
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}
