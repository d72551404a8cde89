//! An SSH signature as a proof record carries it, and its armour (PROTOCOL.sshsig) as far as
//! this crate reads it: the key that made a signature, when it is a plain ed25519 key. base64 is the maintained `base64` crate, used
//! strictly (canonical padding, no trailing bits), as ssh-keygen reads it.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

/// An SSH signature over a record's canonical text, as the note carries it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signature {
    /// The armored signature, `-----BEGIN SSH SIGNATURE-----` to `-----END SSH SIGNATURE-----`,
    /// each line ending in a newline, as `ssh-keygen -Y sign` prints it.
    pub armor: String,
    /// The record's canonical bytes, which the signature signs: every line of the record before
    /// its first `ssh-signature:` line, exactly as the note holds them, each ending in a newline.
    /// They include `tree:`, so a signed record cannot be moved to another tree unnoticed.
    pub signed: String,
}

/// The key that made an armored SSH signature, in base64 as an allowed signers line writes it,
/// when it is a plain ed25519 key (`None` for anything else, or anything unexpected).
pub(super) fn ed25519_key(armor: &str) -> Option<String> {
    const TYPE: &[u8] = b"ssh-ed25519";
    let body = armor.strip_prefix("-----BEGIN SSH SIGNATURE-----\n")?;
    let (base64, _) = body.split_once("\n-----END SSH SIGNATURE-----")?;
    let blob = decode(&base64.replace('\n', ""))?;
    // "SSHSIG", a version, then the public key as an SSH string (PROTOCOL.sshsig).
    let rest = blob.strip_prefix(b"SSHSIG")?.get(4..)?;
    let (len, rest) = rest.split_first_chunk::<4>()?;
    let key = rest.get(..usize::try_from(u32::from_be_bytes(*len)).ok()?)?;
    // An ed25519 public key: its type and 32 bytes, nothing else.
    let (len, tail) = key.split_first_chunk::<4>()?;
    let (name, tail) = tail.split_at_checked(usize::try_from(u32::from_be_bytes(*len)).ok()?)?;
    let (len, point) = tail.split_first_chunk::<4>()?;
    (name == TYPE && u32::from_be_bytes(*len) == 32 && point.len() == 32).then(|| encode(key))
}

/// Standard base64 with padding.
pub(super) fn encode(bytes: &[u8]) -> String {
    STANDARD.encode(bytes)
}

/// Strict base64 with padding: `None` for anything else, so that no text decodes here that
/// ssh-keygen would read otherwise.
fn decode(text: &str) -> Option<Vec<u8>> {
    STANDARD.decode(text).ok()
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// A signature's armor around `key` (an SSH string), as ssh-keygen lays it out.
    pub fn armor_with(key: &[u8]) -> String {
        let mut blob = b"SSHSIG\0\0\0\x01".to_vec();
        blob.extend_from_slice(&u32::try_from(key.len()).unwrap().to_be_bytes());
        blob.extend_from_slice(key);
        blob.extend_from_slice(b"\0\0\0\x0cgit-prove-it\0\0\0\0\0\0\0\x06sha512\0\0\0\0");
        let text = encode(&blob);
        let lines: Vec<&str> = text
            .as_bytes()
            .chunks(70)
            .map(|c| std::str::from_utf8(c).unwrap())
            .collect();
        format!(
            "-----BEGIN SSH SIGNATURE-----\n{}\n-----END SSH SIGNATURE-----\n",
            lines.join("\n")
        )
    }

    pub fn ed25519(point: u8) -> Vec<u8> {
        let mut key = b"\0\0\0\x0bssh-ed25519\0\0\0\x20".to_vec();
        key.extend_from_slice(&[point; 32]);
        key
    }

    #[test]
    fn base64_is_strict_and_round_trips() {
        for (bytes, text) in [
            (&b""[..], ""),
            (b"f", "Zg=="),
            (b"fo", "Zm8="),
            (b"foo", "Zm9v"),
            (b"foob", "Zm9vYg=="),
            (b"\xff\xfe\xfd", "//79"),
        ] {
            assert_eq!(encode(bytes), text);
            assert_eq!(decode(text).as_deref(), Some(bytes));
        }
        // Non-zero bits past the last byte, missing or misplaced padding, other characters:
        // none decodes, since ssh-keygen would refuse them or read them otherwise.
        for text in [
            "Zh==", "Zm9=", "Zg", "Zg=", "Zg==Zg==", "Zm 9v", "Zm9v\n", "Z===", "Zm-v",
        ] {
            assert_eq!(decode(text), None, "{text}");
        }
    }

    #[test]
    fn the_signing_key_is_read_from_the_armor_only_when_it_is_plain_ed25519() {
        let key = ed25519(7);
        assert_eq!(ed25519_key(&armor_with(&key)), Some(encode(&key)));
        // A certificate, another type, a short key, trailing bytes, a broken armor: not read.
        let mut cert = b"\0\0\0\x20ssh-ed25519-cert-v01@openssh.com".to_vec();
        cert.extend_from_slice(&[7; 40]);
        let mut short = ed25519(7);
        short.pop();
        let mut long = ed25519(7);
        long.push(0);
        for other in [
            cert,
            b"\0\0\0\x07ssh-rsa\0\0\0\x01\x03".to_vec(),
            short,
            long,
        ] {
            assert_eq!(ed25519_key(&armor_with(&other)), None);
        }
        assert_eq!(
            ed25519_key(&armor_with(&key).replace("BEGIN", "BEGUN")),
            None
        );
        assert_eq!(ed25519_key(&armor_with(&key).replace('\n', "\r\n")), None);
        assert_eq!(ed25519_key("-----BEGIN SSH SIGNATURE-----\n"), None);
    }
}
