package sqlite

import "testing"

// TestCheckpointDue: a WAL growing a frame a commit from empty to
// catchUpPages × the checkpoint pages, never started over, wakes the
// checkpointer checkpointSteps times, not at every commit past the pages,
// then has the writer checkpoint itself at every commit until it starts
// over; a WAL started over is woken for again once past the pages.
func TestCheckpointDue(t *testing.T) {
	const pages = 1000
	for _, growth := range []int{1, 7, 90} {
		wokeAt, wakes, firstInline := 0, 0, 0
		for frames := growth; frames < 3*pages; frames += growth {
			wake, inline, woke := checkpointDue(frames, pages, wokeAt)
			wokeAt = woke
			if wake {
				wakes++
				if frames < pages {
					t.Fatalf("growth %d: woken at %d frames, below the %d pages", growth, frames, pages)
				}
			}
			if inline && firstInline == 0 {
				firstInline = frames
			}
			if wake && inline {
				t.Fatalf("growth %d: both woken and inline at %d frames", growth, frames)
			}
			if frames >= catchUpPages*pages && !inline {
				t.Fatalf("growth %d: no inline checkpoint at %d frames", growth, frames)
			}
		}
		if wakes != checkpointSteps {
			t.Errorf("growth %d frames a commit: woken %d times between %d and %d frames, want %d", growth, wakes, pages, catchUpPages*pages, checkpointSteps)
		}
		if firstInline < catchUpPages*pages || firstInline >= catchUpPages*pages+growth {
			t.Errorf("growth %d: the writer first checkpoints at %d frames, want at %d", growth, firstInline, catchUpPages*pages)
		}
	}
	// Started over: below the pages nothing, then woken again.
	if wake, inline, woke := checkpointDue(10, pages, 1500); wake || inline || woke != 0 {
		t.Fatalf("a WAL started over: %v %v %d", wake, inline, woke)
	}
	if wake, _, _ := checkpointDue(pages, pages, 0); !wake {
		t.Fatal("not woken past the pages after the WAL started over")
	}
}
