package projections

import (
	_ "time/tzdata" // zones on a bare machine: days are local to the requested timezone

	"github.com/tradeledger/tradeledger/domain/pnlread"
)

// Days of a PNL history: a zone's days are runs of whole slots
// (fold.Days); ranges in ms are turned into slot bounds here.

// rangeSeconds turns a [from, to) range in ms (0: unbounded) into bucket
// bounds in unix seconds: a bucket is in the range when its start lies in
// [from rounded down to its bucket, to).
func rangeSeconds(fromMs, toMs int64) (int64, int64) {
	from, to := int64(minTime), int64(maxTime)
	if fromMs != 0 {
		from = pnlread.FloorDiv(fromMs, BucketSeconds*1000) * BucketSeconds
	}
	if toMs != 0 {
		to = -pnlread.FloorDiv(-toMs, 1000) // ceil: buckets starting before toMs
	}
	return from, to
}
