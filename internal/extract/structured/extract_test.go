package structured

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// productSchema is the schema of the acceptance tests: every property must
// be filled, with the declared types, from each fixture page.
const productSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "required": ["name", "price", "currency"],
  "properties": {
    "name": {"type": "string", "minLength": 1},
    "price": {"type": "number", "minimum": 0},
    "currency": {"type": "string", "pattern": "^[A-Z]{3}$"},
    "rating": {"type": "number", "minimum": 0, "maximum": 5},
    "url": {"type": "string", "format": "uri"},
    "image": {"type": "string", "format": "uri"},
    "availability": {"type": "string", "enum": ["InStock", "OutOfStock", "PreOrder", "Discontinued"]},
    "datePublished": {"type": "string", "format": "date"}
  }
}`

// hintedSchema is productSchema with x-selector hints for a page that has
// no structured data at all.
const hintedSchema = `{
  "type": "object",
  "required": ["name", "price", "currency"],
  "properties": {
    "name": {"type": "string", "x-selector": "h1.title"},
    "price": {"type": "number", "x-selector": ".buy .price-now"},
    "currency": {"type": "string", "pattern": "^[A-Z]{3}$", "x-selector": ".price-now", "x-attr": "data-currency"},
    "rating": {"type": "number", "maximum": 5, "x-selector": ".stars", "x-attr": "data-rating"},
    "url": {"type": "string", "format": "uri", "x-selector": "a.permalink", "x-attr": "href"},
    "image": {"type": "string", "format": "uri", "x-selector": "#main-img", "x-attr": "src"},
    "availability": {"type": "string", "enum": ["InStock", "OutOfStock", "PreOrder", "Discontinued"], "x-selector": ".stock"},
    "datePublished": {"type": "string", "format": "date", "x-selector": "time.published"},
    "tags": {"type": "array", "items": {"type": "string"}, "x-selector": ".tags li"}
  }
}`

func mustCompile(t *testing.T, doc string) *Schema {
	t.Helper()
	s, err := Compile(json.RawMessage(doc), "options.outputSchema")
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	return s
}

func fixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestProductFixtures is acceptance 1: four product pages, each carrying
// its data one way, fill the whole schema with exact, coerced values and
// say where each came from.
func TestProductFixtures(t *testing.T) {
	cases := []struct {
		name, file, url, schema string
		want                    map[string]any
		sources                 map[string]string
	}{
		{
			name: "json-ld", file: "product_jsonld.html", url: "https://shop.example.com/p/trail-runner-3?utm=x", schema: productSchema,
			want: map[string]any{
				"name": "Trail Runner 3", "price": 1299.0, "currency": "USD", "rating": 4.6,
				"url": "https://shop.example.com/p/trail-runner-3", "image": "https://shop.example.com/img/tr3-front.jpg",
				"availability": "InStock", "datePublished": "2024-03-05",
			},
			sources: map[string]string{
				"name": "json-ld:Product.name", "price": "json-ld:Product.offers.price", "currency": "json-ld:Product.offers.priceCurrency",
				"rating": "json-ld:Product.aggregateRating.ratingValue", "url": "json-ld:Product.url", "image": "json-ld:Product.image",
				"availability": "json-ld:Product.offers.availability", "datePublished": "json-ld:Product.releaseDate",
			},
		},
		{
			name: "microdata", file: "product_microdata.html", url: "https://shop.example.de/produkt/aqua?ref=1", schema: productSchema,
			want: map[string]any{
				"name": "Wasserkocher Aqua 1,7 l", "price": 1299.0, "currency": "EUR", "rating": 4.2,
				"url": "https://shop.example.de/produkt/aqua", "image": "https://shop.example.de/bilder/aqua.png",
				"availability": "OutOfStock", "datePublished": "2023-11-20",
			},
			sources: map[string]string{
				"name": "microdata:Product.name", "price": "microdata:Product.offers.price", "currency": "microdata:Product.offers.priceCurrency",
				"rating": "microdata:Product.aggregateRating.ratingValue", "url": "microdata:Product.url", "image": "microdata:Product.image",
				"availability": "microdata:Product.offers.availability", "datePublished": "microdata:Product.releaseDate",
			},
		},
		{
			name: "opengraph only", file: "product_og.html", url: "https://audiohaus.example/products/x2?utm=1", schema: productSchema,
			want: map[string]any{
				"name": "Studio Headphones X2", "price": 1299.0, "currency": "GBP", "rating": 4.8,
				"url": "https://audiohaus.example/products/x2", "image": "https://audiohaus.example/media/x2-large.jpg",
				"availability": "InStock", "datePublished": "2024-02-29",
			},
			sources: map[string]string{
				"name": "og:title", "price": "product:price:amount", "currency": "product:price:currency", "rating": "og:rating",
				"url": "og:url", "image": "og:image", "availability": "product:availability", "datePublished": "article:published_time",
			},
		},
		{
			name: "x-selector hints", file: "product_plain.html", url: "https://kitchen.example/shop/skillet", schema: hintedSchema,
			want: map[string]any{
				"name": "Cast Iron Skillet 30cm", "price": 1299.5, "currency": "CHF", "rating": 4.5,
				"url": "https://kitchen.example/items/skillet-30", "image": "https://kitchen.example/shop/images/skillet.webp",
				"availability": "InStock", "datePublished": "2024-03-05", "tags": []any{"cookware", "iron"},
			},
			sources: map[string]string{
				"name": "selector:h1.title", "price": "selector:.buy .price-now", "currency": "selector:.price-now@data-currency",
				"rating": "selector:.stars@data-rating", "url": "selector:a.permalink@href", "image": "selector:#main-img@src",
				"availability": "selector:.stock", "datePublished": "selector:time.published", "tags": "selector:.tags li",
			},
		},
		{
			name: "rdfa lite", file: "product_rdfa.html", url: "https://lamps.example/lumen", schema: productSchema,
			want: map[string]any{
				"name": "Desk Lamp Lumen", "price": 49.99, "currency": "USD", "rating": 3.9,
				"url": "https://lamps.example/lumen", "image": "https://lamps.example/lumen.jpg",
				"availability": "PreOrder", "datePublished": "2022-07-01",
			},
			sources: map[string]string{
				"name": "rdfa:Product.name", "price": "rdfa:Product.offers.price", "currency": "rdfa:Product.offers.priceCurrency",
				"rating": "rdfa:Product.aggregateRating.ratingValue", "url": "rdfa:Product.url", "image": "rdfa:Product.image",
				"availability": "rdfa:Product.offers.availability", "datePublished": "rdfa:Product.releaseDate",
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := mustCompile(t, tc.schema)
			res := s.Extract(parsedPage(t, fixture(t, tc.file), tc.url))
			if !reflect.DeepEqual(res.Object, tc.want) {
				t.Errorf("object:\n got %#v\nwant %#v", res.Object, tc.want)
			}
			if !reflect.DeepEqual(res.Sources, tc.sources) {
				t.Errorf("sources:\n got %#v\nwant %#v", res.Sources, tc.sources)
			}
			if len(res.Missing) != 0 || len(res.Problems) != 0 || !res.Complete() {
				t.Errorf("missing %v, problems %v; want none", res.Missing, res.Problems)
			}
		})
	}
}

// TestRequiredMissing: a page lacking a required property fails with a
// message naming it, and lists it missing.
func TestRequiredMissing(t *testing.T) {
	s := mustCompile(t, productSchema)
	res := s.Extract(parsedPage(t, fixture(t, "article_missing_price.html"), "https://blog.example/kettles"))
	if res.Valid() {
		t.Fatalf("valid, want problems; object %#v", res.Object)
	}
	want := []string{"currency: required property is missing", "price: required property is missing"}
	if !reflect.DeepEqual(res.Problems, want) {
		t.Errorf("problems = %q, want %q", res.Problems, want)
	}
	wantMissing := []string{"availability", "currency", "image", "price", "rating"}
	if !reflect.DeepEqual(res.Missing, wantMissing) {
		t.Errorf("missing = %q, want %q", res.Missing, wantMissing)
	}
	wantObj := map[string]any{"name": "Why we love kettles", "datePublished": "2024-05-01", "url": "https://blog.example/kettles"}
	if !reflect.DeepEqual(res.Object, wantObj) {
		t.Errorf("object = %#v, want %#v", res.Object, wantObj)
	}
	if res.Sources["url"] != "page:url" || res.Sources["name"] != "json-ld:Article.headline" {
		t.Errorf("sources = %v", res.Sources)
	}
}

// TestNestedAndArrays: nested objects come from the nested entity, arrays
// from repeated values, an @id reference is followed, and sources name
// each leaf.
func TestNestedAndArrays(t *testing.T) {
	s := mustCompile(t, `{
	  "type": "object",
	  "properties": {
	    "title": {"type": "string"},
	    "images": {"type": "array", "items": {"type": "string", "format": "uri"}},
	    "brand": {"type": "string"},
	    "offer": {"type": "object", "properties": {
	      "amount": {"type": "number"}, "currency": {"type": "string"}, "inStock": {"type": "boolean"}}},
	    "reviews": {"type": "array", "items": {"type": "object", "properties": {
	      "author": {"type": "string"}, "rating": {"type": "integer"}}}},
	    "reviewCount": {"type": "integer"},
	    "seller": {"type": "object", "properties": {"name": {"type": "string"}}}
	  }
	}`)
	res := s.Extract(parsedPage(t, fixture(t, "product_jsonld.html"), "https://shop.example.com/p/trail-runner-3"))
	want := map[string]any{
		"title":  "Trail Runner 3",
		"images": []any{"https://shop.example.com/img/tr3-front.jpg", "https://shop.example.com/img/tr3-side.jpg"},
		"brand":  "Peak",
		"offer":  map[string]any{"amount": 1299.0, "currency": "USD", "inStock": true},
		"reviews": []any{
			map[string]any{"author": "Ana", "rating": int64(5)},
			map[string]any{"author": "Bo", "rating": int64(4)},
		},
		"reviewCount": int64(213),
	}
	if !reflect.DeepEqual(res.Object, want) {
		t.Errorf("object:\n got %#v\nwant %#v", res.Object, want)
	}
	wantSrc := map[string]string{
		"title": "json-ld:Product.name", "images": "json-ld:Product.image", "brand": "json-ld:Product.brand.name",
		"offer.amount": "json-ld:Product.offers.price", "offer.currency": "json-ld:Product.offers.priceCurrency",
		"offer.inStock": "json-ld:Product.offers.availability", "reviews": "json-ld:Product.review",
		"reviewCount": "json-ld:Product.aggregateRating.reviewCount",
	}
	if !reflect.DeepEqual(res.Sources, wantSrc) {
		t.Errorf("sources:\n got %#v\nwant %#v", res.Sources, wantSrc)
	}
	// A nested object with no matching entity is missing, not filled
	// from its parent.
	if !reflect.DeepEqual(res.Missing, []string{"seller"}) {
		t.Errorf("missing = %q, want [seller]", res.Missing)
	}
	if len(res.Notes) == 0 || !strings.Contains(strings.Join(res.Notes, "\n"), "JSON-LD block 3 skipped") {
		t.Errorf("notes = %q, want the unreadable third block named", res.Notes)
	}
}

// TestXTypeChoosesEntity: a root x-type makes another entity fill the
// object; without it the best-scoring one (Product) wins.
func TestXTypeChoosesEntity(t *testing.T) {
	page := parsedPage(t, fixture(t, "product_jsonld.html"), "https://shop.example.com/p/trail-runner-3")
	s := mustCompile(t, `{"type":"object","x-type":"Organization","properties":{"name":{"type":"string"},"logo":{"type":"string"}}}`)
	res := s.Extract(page)
	want := map[string]any{"name": "Peak Outfitters Inc.", "logo": "https://shop.example.com/logo.png"}
	if !reflect.DeepEqual(res.Object, want) {
		t.Errorf("object = %#v, want %#v", res.Object, want)
	}
	if res.Sources["name"] != "json-ld:Organization.name" {
		t.Errorf("sources = %v", res.Sources)
	}
}

// TestNavigationNotTheSubject: breadcrumb and list items never fill the
// page's object unless x-type asks for them.
func TestNavigationNotTheSubject(t *testing.T) {
	page := parsedPage(t, `<title>Shoes</title><script type="application/ld+json">
	  {"@type":"BreadcrumbList","itemListElement":[{"@type":"ListItem","position":1,"name":"Home","item":"/"}]}
	</script>`, "https://shop.example/shoes")
	res := mustCompile(t, `{"type":"object","properties":{"name":{"type":"string"}}}`).Extract(page)
	if res.Object["name"] != "Shoes" || res.Sources["name"] != "html:title" {
		t.Errorf("name = %v from %q, want Shoes from html:title", res.Object["name"], res.Sources["name"])
	}
	res = mustCompile(t, `{"type":"object","x-type":"ListItem","properties":{"name":{"type":"string"}}}`).Extract(page)
	if res.Object["name"] != "Home" || res.Sources["name"] != "json-ld:ListItem.name" {
		t.Errorf("with x-type: name = %v from %q", res.Object["name"], res.Sources["name"])
	}
}

// TestCandidateRejectedFallsThrough: a value that fails the property's
// subschema is passed over for the next source, and a note says why when
// nothing else fits.
func TestCandidateRejectedFallsThrough(t *testing.T) {
	page := parsedPage(t, fixture(t, "product_jsonld.html"), "https://shop.example.com/p/x")
	s := mustCompile(t, `{"type":"object","properties":{
	  "price": {"type": "number", "maximum": 1000},
	  "sku": {"type": "string", "pattern": "^[0-9]+$"}}}`)
	res := s.Extract(page)
	// JSON-LD says 1299 (over the maximum); product:price:amount says 999.
	if res.Object["price"] != 999.0 || res.Sources["price"] != "product:price:amount" {
		t.Errorf("price = %v from %q, want 999 from product:price:amount", res.Object["price"], res.Sources["price"])
	}
	if !reflect.DeepEqual(res.Missing, []string{"sku"}) {
		t.Fatalf("missing = %q", res.Missing)
	}
	notes := strings.Join(res.Notes, "\n")
	if !strings.Contains(notes, `sku: json-ld:Product.sku gave TR3-BLK-42, which the schema refuses`) {
		t.Errorf("notes = %q, want the refused sku explained", notes)
	}
}

// TestSelectorContainers: an object or array-of-objects property with an
// x-selector scopes its properties' selectors to the matched elements.
func TestSelectorContainers(t *testing.T) {
	page := parsedPage(t, `<html><body>
	  <div class="buy"><span class="amt">€ 12,50</span><span class="cur">EUR</span></div>
	  <ul><li class="r"><b>Ana</b><i>5</i></li><li class="r"><b>Bo</b><i>not rated</i></li></ul>
	  <div class="desc"><p>Hello <em>world</em></p></div>
	</body></html>`, "https://x.example/")
	s := mustCompile(t, `{"type":"object","properties":{
	  "offer": {"type":"object","x-selector":".buy","properties":{
	    "price":{"type":"number","x-selector":".amt"},"currency":{"type":"string","x-selector":".cur"}}},
	  "reviews": {"type":"array","x-selector":"li.r","items":{"type":"object","properties":{
	    "author":{"type":"string","x-selector":"b"},"stars":{"type":"integer","x-selector":"i"}}}},
	  "descriptionHtml": {"type":"string","x-selector":".desc","x-attr":"html"}}}`)
	res := s.Extract(page)
	want := map[string]any{
		"offer":           map[string]any{"price": 12.5, "currency": "EUR"},
		"reviews":         []any{map[string]any{"author": "Ana", "stars": int64(5)}, map[string]any{"author": "Bo"}},
		"descriptionHtml": "<p>Hello <em>world</em></p>",
	}
	if !reflect.DeepEqual(res.Object, want) {
		t.Errorf("object:\n got %#v\nwant %#v", res.Object, want)
	}
	if res.Sources["offer.price"] != "selector:.amt" || res.Sources["reviews"] != "selector:li.r" {
		t.Errorf("sources = %v", res.Sources)
	}
}

// TestPageText: the model's view of a page is compact and skips scripts.
func TestPageText(t *testing.T) {
	page := parsedPage(t, `<html><head><title>T</title><style>.a{}</style></head><body>
	  <h1>Big   Title</h1><script>var x = 1;</script>
	  <p>First <b>bold</b> line.</p><div hidden>secret</div><img src="a.png" alt="A photo">
	  <ul><li>one</li><li>two</li></ul></body></html>`, "")
	want := "T\nBig Title\nFirst bold line.\n[A photo]\none\ntwo"
	if got := page.Text(); got != want {
		t.Errorf("Text() = %q, want %q", got, want)
	}
}
