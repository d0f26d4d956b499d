package content

import (
	"fmt"
	"strings"

	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	"golang.org/x/net/html"
)

// toMarkdown converts the cleaned content to CommonMark with GitHub's
// tables: fenced code blocks with their language, "-" bullets, ATX
// headings, a table's first row as its header when it has no <th> row.
// Lines end without trailing spaces (outside code blocks) and blank lines
// never repeat.
func toMarkdown(clean *html.Node, pageURL string) (string, error) {
	conv := converter.NewConverter(converter.WithPlugins(
		base.NewBasePlugin(),
		commonmark.NewCommonmarkPlugin(),
		table.NewTablePlugin(table.WithHeaderPromotion(true), table.WithSkipEmptyRows(true)),
	))
	var opts []converter.ConvertOptionFunc
	if pageURL != "" {
		opts = append(opts, converter.WithDomain(pageURL))
	}
	md, err := conv.ConvertNode(clean, opts...)
	if err != nil {
		return "", fmt.Errorf("markdown conversion: %w", err)
	}
	return tidyMarkdown(string(md)), nil
}

// tidyMarkdown trims trailing spaces from lines outside fenced code
// blocks, keeps at most one blank line in a row there, and trims the
// whole.
func tidyMarkdown(md string) string {
	lines := strings.Split(md, "\n")
	out := lines[:0]
	fence := ""
	blank := false
	for _, l := range lines {
		t := strings.TrimLeft(l, " ")
		if fence == "" && (strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~")) {
			fence = t[:3]
		} else if fence != "" && strings.HasPrefix(t, fence) && strings.TrimRight(t, fence[:1]+" ") == "" {
			fence = ""
			out = append(out, l)
			blank = false
			continue
		}
		if fence != "" {
			out = append(out, l)
			blank = false
			continue
		}
		l = strings.TrimRight(l, " \t")
		if l == "" {
			if blank {
				continue
			}
			blank = true
		} else {
			blank = false
		}
		out = append(out, l)
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}
