package uring

// Setup flags (io_uring_params.flags) that moond uses or reports.
const (
	SetupIOPoll       uint32 = 1 << 0
	SetupSQPoll       uint32 = 1 << 1
	SetupCQSize       uint32 = 1 << 3
	SetupClamp        uint32 = 1 << 4
	SetupSubmitAll    uint32 = 1 << 7  // keep submitting a batch past a failed SQE (5.18)
	SetupCoopTaskrun  uint32 = 1 << 8  // no IPI to run completion task work (5.19)
	SetupTaskrunFlag  uint32 = 1 << 9  // IORING_SQ_TASKRUN in sq flags when work is pending
	SetupSingleIssuer uint32 = 1 << 12 // one thread submits (6.0)
	SetupDeferTaskrun uint32 = 1 << 13 // completions run only when the owner enters (6.1); needs SingleIssuer
)

// DefaultSetupFlags are the flags a shard asks for. New drops those the kernel
// refuses, newest first, and Ring.Flags tells which stayed in force.
const DefaultSetupFlags = SetupSingleIssuer | SetupCoopTaskrun | SetupDeferTaskrun | SetupTaskrunFlag | SetupSubmitAll

// droppable lists setup flags in the order New gives them up on EINVAL. DEFER_TASKRUN
// goes before SINGLE_ISSUER because the kernel refuses the first without the second.
var droppable = []uint32{SetupDeferTaskrun, SetupSingleIssuer, SetupCoopTaskrun, SetupTaskrunFlag, SetupSubmitAll}

// Feature bits (io_uring_params.features) the kernel reports.
const (
	FeatSingleMmap     uint32 = 1 << 0
	FeatNoDrop         uint32 = 1 << 1
	FeatSubmitStable   uint32 = 1 << 2
	FeatRWCurPos       uint32 = 1 << 3
	FeatCurPersonality uint32 = 1 << 4
	FeatFastPoll       uint32 = 1 << 5
	FeatPoll32Bits     uint32 = 1 << 6
	FeatSQPollNonfixed uint32 = 1 << 7
	FeatExtArg         uint32 = 1 << 8
	FeatNativeWorkers  uint32 = 1 << 9
	FeatRsrcTags       uint32 = 1 << 10
	FeatCQESkip        uint32 = 1 << 11
	FeatLinkedFile     uint32 = 1 << 12
	FeatRegRegRing     uint32 = 1 << 13
	FeatRecvSendBundle uint32 = 1 << 14
	FeatMinTimeout     uint32 = 1 << 15
)

// Opcodes (enum io_uring_op).
const (
	OpNop            uint8 = 0
	OpReadv          uint8 = 1
	OpWritev         uint8 = 2
	OpFsync          uint8 = 3
	OpReadFixed      uint8 = 4
	OpWriteFixed     uint8 = 5
	OpPollAdd        uint8 = 6
	OpPollRemove     uint8 = 7
	OpSyncFileRange  uint8 = 8
	OpSendmsg        uint8 = 9
	OpRecvmsg        uint8 = 10
	OpTimeout        uint8 = 11
	OpTimeoutRemove  uint8 = 12
	OpAccept         uint8 = 13
	OpAsyncCancel    uint8 = 14
	OpLinkTimeout    uint8 = 15
	OpConnect        uint8 = 16
	OpFallocate      uint8 = 17
	OpOpenat         uint8 = 18
	OpClose          uint8 = 19
	OpFilesUpdate    uint8 = 20
	OpStatx          uint8 = 21
	OpRead           uint8 = 22
	OpWrite          uint8 = 23
	OpFadvise        uint8 = 24
	OpMadvise        uint8 = 25
	OpSend           uint8 = 26
	OpRecv           uint8 = 27
	OpOpenat2        uint8 = 28
	OpEpollCtl       uint8 = 29
	OpSplice         uint8 = 30
	OpProvideBuffers uint8 = 31
	OpRemoveBuffers  uint8 = 32
	OpTee            uint8 = 33
	OpShutdown       uint8 = 34
	OpRenameat       uint8 = 35
	OpUnlinkat       uint8 = 36
	OpMkdirat        uint8 = 37
	OpSymlinkat      uint8 = 38
	OpLinkat         uint8 = 39
	OpMsgRing        uint8 = 40
)

// OpName returns the kernel's name for an opcode ("WRITEV"), or "OP_<n>".
func OpName(op uint8) string {
	if int(op) < len(opNames) && opNames[op] != "" {
		return opNames[op]
	}
	return "OP_" + itoa(int(op))
}

var opNames = [...]string{
	"NOP", "READV", "WRITEV", "FSYNC", "READ_FIXED", "WRITE_FIXED", "POLL_ADD", "POLL_REMOVE",
	"SYNC_FILE_RANGE", "SENDMSG", "RECVMSG", "TIMEOUT", "TIMEOUT_REMOVE", "ACCEPT", "ASYNC_CANCEL",
	"LINK_TIMEOUT", "CONNECT", "FALLOCATE", "OPENAT", "CLOSE", "FILES_UPDATE", "STATX", "READ", "WRITE",
	"FADVISE", "MADVISE", "SEND", "RECV", "OPENAT2", "EPOLL_CTL", "SPLICE", "PROVIDE_BUFFERS",
	"REMOVE_BUFFERS", "TEE", "SHUTDOWN", "RENAMEAT", "UNLINKAT", "MKDIRAT", "SYMLINKAT", "LINKAT", "MSG_RING",
	"FSETXATTR", "SETXATTR", "FGETXATTR", "GETXATTR", "SOCKET", "URING_CMD", "SEND_ZC", "SENDMSG_ZC",
	"READ_MULTISHOT", "WAITID", "FUTEX_WAIT", "FUTEX_WAKE", "FUTEX_WAITV", "FIXED_FD_INSTALL", "FTRUNCATE",
	"BIND", "LISTEN", "RECV_ZC", "EPOLL_WAIT", "READV_FIXED", "WRITEV_FIXED", "PIPE",
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}

// SQE flags (io_uring_sqe.flags).
const (
	SQEFixedFile      uint8 = 1 << 0 // Fd is an index into the registered file table
	SQEIODrain        uint8 = 1 << 1 // start only after every earlier SQE completed
	SQEIOLink         uint8 = 1 << 2 // the next SQE starts after this one succeeds; a failure or short result cancels the rest
	SQEIOHardlink     uint8 = 1 << 3 // like IOLink, but the chain goes on even when this one fails
	SQEAsync          uint8 = 1 << 4 // go to the async worker at once instead of trying inline first
	SQEBufferSelect   uint8 = 1 << 5 // take the buffer from the provided group in BufIndex (see BufRing)
	SQECQESkipSuccess uint8 = 1 << 6
)

// Operation-specific flags.
const (
	FsyncDatasync       uint32 = 1 << 0 // IORING_FSYNC_DATASYNC: fdatasync instead of fsync
	TimeoutAbs          uint32 = 1 << 0
	TimeoutBoottime     uint32 = 1 << 2
	TimeoutRealtime     uint32 = 1 << 3
	TimeoutETimeSuccess uint32 = 1 << 5
	AcceptMultishot     uint16 = 1 << 0 // in Ioprio of an ACCEPT SQE
	RecvPollFirst       uint16 = 1 << 0 // IORING_RECVSEND_POLL_FIRST, in Ioprio of a RECV/SEND SQE: poll before trying
	RecvMultishot       uint16 = 1 << 1 // IORING_RECV_MULTISHOT, in Ioprio of a RECV SQE (6.0); needs SQEBufferSelect
	CancelAll           uint32 = 1 << 0
	CancelFd            uint32 = 1 << 1
	CancelAny           uint32 = 1 << 2
)

// CQE flags (io_uring_cqe.flags).
const (
	CQEFBuffer       uint32 = 1 << 0 // a provided buffer was consumed; its id is Flags >> CQEBufferShift
	CQEFMore         uint32 = 1 << 1 // a multishot request will post more CQEs
	CQEFSockNonempty uint32 = 1 << 2
	CQEFNotif        uint32 = 1 << 3

	CQEBufferShift = 16 // IORING_CQE_BUFFER_SHIFT: the buffer id is in the upper 16 bits of Flags
)

// TimeoutUserData is the user_data of the internal TIMEOUT SQE that
// SubmitAndWaitTimeout uses on kernels without IORING_FEAT_EXT_ARG. Callers
// must not use this value themselves and should skip CQEs that carry it.
const TimeoutUserData = ^uint64(0)
