package node

import (
	"github.com/prometheus/client_golang/prometheus"
)

// tlsMetrics are the node's TLS state on /metrics:
// vigil_tls_cert_expiry_timestamp_seconds (when the certificate in use
// expires, Unix seconds; absent without TLS) and vigil_insecure_lab (1
// when the node runs without the TLS its setup needs, --insecure-lab).
func tlsMetrics(s *Node) prometheus.Collector {
	return tlsCollector{s: s,
		expiry: prometheus.NewDesc("vigil_tls_cert_expiry_timestamp_seconds", "When the node's TLS certificate in use expires (Unix seconds).", nil, nil),
		lab:    prometheus.NewDesc("vigil_insecure_lab", "1 when the node runs in clear where TLS is required (--insecure-lab).", nil, nil),
	}
}

type tlsCollector struct {
	s           *Node
	expiry, lab *prometheus.Desc
}

func (c tlsCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.expiry; ch <- c.lab }

func (c tlsCollector) Collect(ch chan<- prometheus.Metric) {
	lab := 0.0
	if c.s.InsecureLab() {
		lab = 1
	}
	ch <- prometheus.MustNewConstMetric(c.lab, prometheus.GaugeValue, lab)
	if t := c.s.TLS(); t != nil {
		ch <- prometheus.MustNewConstMetric(c.expiry, prometheus.GaugeValue, float64(t.Leaf().NotAfter.Unix()))
	}
}
