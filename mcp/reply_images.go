package mcp

import (
	"bytes"
	"context"
	"encoding/base64"
	"image"
	"image/jpeg"
	_ "image/png" // decodes PNG screenshots
	"strings"

	"github.com/browsertask/browsertask/engine"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/image/draw"
)

// Images a model can see: a finished run's image artifacts travel as image
// blocks, downscaled so that together their base64 fits the room the
// answer's budget leaves: each is decoded, scaled to fit
// imageMaxWidth × imageMaxHeight pixels and encoded as JPEG (quality 75), then halved
// until it fits its share; one that cannot fit at imageMinWidth is left
// out (its resource_link still leads to the original).
const (
	imageMaxWidth  = 1024
	imageMaxHeight = 2048
	imageMinWidth  = 160
	// imageMaxSourceBytes skips decoding very large artifacts.
	imageMaxSourceBytes = 16 << 20
)

// countImages counts the image artifacts among metas.
func countImages(metas []*engine.Artifact) int {
	n := 0
	for _, a := range metas {
		if isImage(a.MimeType) {
			n++
		}
	}
	return n
}

func isImage(mime string) bool { return strings.HasPrefix(mime, "image/") }

// imageBlocks returns image blocks of the first maxImages image artifacts
// of metas whose base64 together fits in room bytes.
func (s *Server) imageBlocks(ctx context.Context, metas []*engine.Artifact, room int) []sdk.Content {
	var imgs []*engine.Artifact
	for _, a := range metas {
		if isImage(a.MimeType) && a.Size <= imageMaxSourceBytes && len(imgs) < maxImages {
			imgs = append(imgs, a)
		}
	}
	var out []sdk.Content
	for i, a := range imgs {
		share := room / (len(imgs) - i)
		raw, err := s.eng.ArtifactBytes(ctx, a.ID, 0, a.Size)
		if err != nil {
			s.log.Debug("image block: read failed", "artifactId", a.ID, "error", err)
			continue
		}
		data, err := fitImage(raw, base64.StdEncoding.DecodedLen(share))
		if err != nil || data == nil {
			continue
		}
		room -= base64.StdEncoding.EncodedLen(len(data))
		out = append(out, &sdk.ImageContent{Data: data, MIMEType: "image/jpeg"})
	}
	return out
}

// fitImage returns raw (PNG or JPEG) as a JPEG of at most limit bytes, or
// nil when even the smallest size does not fit.
func fitImage(raw []byte, limit int) ([]byte, error) {
	src, _, err := image.Decode(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	b := src.Bounds()
	// The first size fits imageMaxWidth × imageMaxHeight; each try halves it.
	scale := min(1, float64(imageMaxWidth)/float64(max(1, b.Dx())), float64(imageMaxHeight)/float64(max(1, b.Dy())))
	for {
		w, h := max(1, int(float64(b.Dx())*scale)), max(1, int(float64(b.Dy())*scale))
		dst := image.NewRGBA(image.Rect(0, 0, w, h))
		draw.ApproxBiLinear.Scale(dst, dst.Bounds(), src, b, draw.Src, nil)
		var buf bytes.Buffer
		if err := jpeg.Encode(&buf, dst, &jpeg.Options{Quality: 75}); err != nil {
			return nil, err
		}
		if buf.Len() <= limit {
			return buf.Bytes(), nil
		}
		if w <= imageMinWidth {
			break
		}
		scale /= 2
	}
	return nil, nil
}
