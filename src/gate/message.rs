//! The gate's answer to a host, host-neutral: the text is worded by `report`, and each host
//! adapter turns it into its own protocol.

/// What the gate answers an event with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Message {
    /// Nothing to say: the turn ends.
    Silent,
    /// A user-visible notice; the turn ends.
    Notice(String),
    /// Send the agent back with this reason.
    Block(String),
}
