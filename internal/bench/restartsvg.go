package bench

import (
	"bytes"
	"fmt"
	"html"
	"math"
	"slices"
)

// RestartSVG draws restart results (one per log length) as an SVG: the
// time to the first decision and the RSS (at it, its peak, and after the
// settle when measured) against the log's length, on a logarithmic axis,
// each with its target. Every run is a dot; the line joins the medians.
func RestartSVG(results []RestartResult, title string) []byte {
	rs := slices.Clone(results)
	slices.SortFunc(rs, func(a, b RestartResult) int { return a.Events - b.Events })
	var b bytes.Buffer
	const w, h, pw, ph = 900, 380, 360, 260
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", w, h, w, h)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", w, h)
	fmt.Fprintf(&b, `<text x="%d" y="20" text-anchor="middle" font-size="14">%s</text>`+"\n", w/2, html.EscapeString(title))
	type series struct {
		name  string
		color string
		get   func(RestartRun) float64
	}
	panel := func(x0, y0 int, ylabel string, target float64, targetLabel string, ss []series) {
		// Axes ranges.
		xmin, xmax := math.Inf(1), math.Inf(-1)
		ymax := target * 1.2
		for _, r := range rs {
			x := math.Log10(float64(r.Events))
			xmin, xmax = math.Min(xmin, x), math.Max(xmax, x)
			for _, run := range r.Runs {
				for _, s := range ss {
					ymax = math.Max(ymax, s.get(run)*1.1)
				}
			}
		}
		if len(rs) == 0 {
			xmin, xmax = 4, 7
		}
		xmin, xmax = math.Floor(xmin), math.Ceil(xmax)
		if xmax == xmin {
			xmax++
		}
		px := func(x float64) float64 { return float64(x0) + (math.Log10(x)-xmin)/(xmax-xmin)*pw }
		py := func(y float64) float64 { return float64(y0+ph) - y/ymax*ph }
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#888"/>`+"\n", x0, y0, pw, ph)
		for e := xmin; e <= xmax; e++ {
			x := px(math.Pow(10, e))
			fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#eee"/>`+"\n", x, y0, x, y0+ph)
			fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", x, y0+ph+16, eventsLabel(math.Pow(10, e)))
		}
		step := niceStep(ymax / 5)
		for y := 0.0; y <= ymax; y += step {
			fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#eee"/>`+"\n", x0, py(y), x0+pw, py(y))
			fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end">%g</text>`+"\n", x0-4, py(y)+4, y)
		}
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle">events in the log</text>`+"\n", x0+pw/2, y0+ph+34)
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle" transform="rotate(-90 %d %d)">%s</text>`+"\n", x0-40, y0+ph/2, x0-40, y0+ph/2, html.EscapeString(ylabel))
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#c00" stroke-dasharray="6 4"/>`+"\n", x0, py(target), x0+pw, py(target))
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end" fill="#c00">%s</text>`+"\n", x0+pw-4, py(target)-4, html.EscapeString(targetLabel))
		for i, s := range ss {
			var pts []string
			for _, r := range rs {
				var ys []float64
				for _, run := range r.Runs {
					y := s.get(run)
					if y == 0 {
						continue // not measured (the settled RSS without --settle)
					}
					ys = append(ys, y)
					fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s" fill-opacity="0.6"/>`+"\n", px(float64(r.Events)), py(y), s.color)
				}
				if len(ys) > 0 {
					pts = append(pts, fmt.Sprintf("%.1f,%.1f", px(float64(r.Events)), py(median(ys))))
				}
			}
			if len(pts) > 1 {
				fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"/>`+"\n", joinSpace(pts), s.color)
			}
			fmt.Fprintf(&b, `<rect x="%d" y="%d" width="10" height="10" fill="%s"/><text x="%d" y="%d">%s</text>`+"\n",
				x0+8, y0+8+i*16, s.color, x0+22, y0+17+i*16, html.EscapeString(s.name))
		}
	}
	panel(70, 50, "seconds", 5, "target 5 s", []series{
		{"first new decision after the start", "#1f77b4", func(r RestartRun) float64 { return r.DecisionSeconds }},
		{"CPU time until then", "#2ca02c", func(r RestartRun) float64 { return r.CPUSeconds }},
	})
	panel(510, 50, "MB", 250, "target 250 MB", []series{
		{"RSS at the first decision", "#ff7f0e", func(r RestartRun) float64 { return r.RSSMB }},
		{"peak RSS (VmHWM)", "#9467bd", func(r RestartRun) float64 { return r.HWMMB }},
		{"RSS after --settle (peak since the start)", "#8c564b", func(r RestartRun) float64 { return max(r.SettledRSSMB, r.SettledHWMMB) }},
	})
	b.WriteString("</svg>\n")
	return b.Bytes()
}

func eventsLabel(n float64) string {
	switch {
	case n >= 1e6:
		return fmt.Sprintf("%gM", n/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%gk", n/1e3)
	}
	return fmt.Sprintf("%g", n)
}

// niceStep rounds s up to 1, 2 or 5 times a power of ten.
func niceStep(s float64) float64 {
	if s <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(s)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= s {
			return m * p
		}
	}
	return 10 * p
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func joinSpace(s []string) string {
	var b bytes.Buffer
	for i, x := range s {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(x)
	}
	return b.String()
}
