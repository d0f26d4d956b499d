package snapshot

// interactive lists the roles a model acts on: each gets a reference.
// Options of a select (a combobox) are listed on the combobox's line
// instead, since act selects them through it.
var interactive = map[string]bool{
	"link": true, "button": true, "textbox": true, "searchbox": true,
	"checkbox": true, "radio": true, "combobox": true, "listbox": true,
	"slider": true, "spinbutton": true, "switch": true, "tab": true,
	"menuitem": true, "menuitemcheckbox": true, "menuitemradio": true,
	"treeitem": true, "option": true, "DisclosureTriangle": true,
	"ColorWell": true, "Date": true, "DateTime": true, "InputTime": true,
	"scrollbar": true,
	// DPUB-ARIA's links (footnote references and back links: Sphinx
	// writes them).
	"doc-noteref": true, "doc-backlink": true, "doc-biblioref": true, "doc-glossref": true,
}

// roleNames shortens Chromium's internal role names to what a reader
// knows them as.
var roleNames = map[string]string{
	"DisclosureTriangle": "summary",
	"ColorWell":          "color",
	"Date":               "date",
	"DateTime":           "datetime",
	"InputTime":          "time",
}

// landmarks are the regions that orient a reader; their content is
// indented one space under a line naming them.
var landmarks = map[string]string{
	"banner": "header", "navigation": "nav", "main": "main",
	"contentinfo": "footer", "complementary": "aside", "search": "search",
	"form": "form", "region": "region", "dialog": "dialog",
	"alertdialog": "alertdialog",
}

// blocks end a run of text: what follows starts a new line.
var blocks = map[string]bool{
	"paragraph": true, "listitem": true, "row": true, "heading": true,
	"list": true, "table": true, "grid": true, "treegrid": true,
	"article": true, "blockquote": true, "figure": true, "term": true,
	"definition": true, "DescriptionListTerm": true, "DescriptionListDetail": true,
	"Pre": true, "separator": true, "Section": true,
	"group": true, "LabelText": true, "alert": true, "status": true,
	"caption": true, "Figcaption": true, "note": true, "math": true,
}

// cells separate the text of table cells on one line.
var cells = map[string]bool{"cell": true, "gridcell": true, "columnheader": true, "rowheader": true}

// states are the properties shown on an interactive element's line, in
// this order: name as shown, and whether the property's value is shown.
var states = []struct {
	prop, show string
}{
	{"checked", "checked"}, {"pressed", "pressed"}, {"selected", "selected"},
	{"expanded", "expanded"}, {"disabled", "disabled"}, {"readonly", "readonly"},
	{"required", "required"}, {"invalid", "invalid"},
}
