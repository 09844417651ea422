package uring

import "strings"

// Info describes what io_uring this kernel offers, for logs and `moond --version`.
type Info struct {
	Flags     uint32  // setup flags in force on a ring created with DefaultSetupFlags
	Features  uint32  // IORING_FEAT_* bits
	Supported []uint8 // opcodes the kernel reports as supported
}

// FlagNames lists the names of the setup flags in force.
func (i Info) FlagNames() []string {
	return bitNames(i.Flags, []bitName{
		{SetupSubmitAll, "SUBMIT_ALL"}, {SetupCoopTaskrun, "COOP_TASKRUN"}, {SetupTaskrunFlag, "TASKRUN_FLAG"},
		{SetupSingleIssuer, "SINGLE_ISSUER"}, {SetupDeferTaskrun, "DEFER_TASKRUN"},
	})
}

// FeatureNames lists the names of the kernel's feature bits.
func (i Info) FeatureNames() []string {
	return bitNames(i.Features, []bitName{
		{FeatSingleMmap, "SINGLE_MMAP"}, {FeatNoDrop, "NODROP"}, {FeatSubmitStable, "SUBMIT_STABLE"},
		{FeatRWCurPos, "RW_CUR_POS"}, {FeatCurPersonality, "CUR_PERSONALITY"}, {FeatFastPoll, "FAST_POLL"},
		{FeatPoll32Bits, "POLL_32BITS"}, {FeatSQPollNonfixed, "SQPOLL_NONFIXED"}, {FeatExtArg, "EXT_ARG"},
		{FeatNativeWorkers, "NATIVE_WORKERS"}, {FeatRsrcTags, "RSRC_TAGS"}, {FeatCQESkip, "CQE_SKIP"},
		{FeatLinkedFile, "LINKED_FILE"}, {FeatRegRegRing, "REG_REG_RING"}, {FeatRecvSendBundle, "RECVSEND_BUNDLE"},
		{FeatMinTimeout, "MIN_TIMEOUT"},
	})
}

// OpNames lists the names of the supported opcodes.
func (i Info) OpNames() []string {
	names := make([]string, 0, len(i.Supported))
	for _, op := range i.Supported {
		names = append(names, OpName(op))
	}
	return names
}

// String is a one-paragraph summary.
func (i Info) String() string {
	return "flags=" + strings.Join(i.FlagNames(), ",") +
		" features=" + strings.Join(i.FeatureNames(), ",") +
		" ops=" + strings.Join(i.OpNames(), ",")
}

type bitName struct {
	bit  uint32
	name string
}

func bitNames(v uint32, names []bitName) []string {
	var out []string
	for _, n := range names {
		if v&n.bit != 0 {
			out = append(out, n.name)
		}
	}
	return out
}
