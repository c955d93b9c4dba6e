//! The default plural of a kind, exactly as controller-gen (v0.21.0 to v0.23.0) derives it:
//! `strings.ToLower(flect.Pluralize(kind))` with github.com/gobuffalo/flect v1.0.3.
//!
//! The plural names the resource (`<plural>.<group>`, the REST path, RBAC rules), so a kind
//! moved from Go to Rust must keep it, quirks included: `Gizmo` → `gizmoes`, `Video` →
//! `videoes`, `Roman` → `romen`. Everything below reproduces flect's observable behaviour (the
//! differential test in this file runs flect itself on some 2,500 words); where a rule looks
//! wrong it is still kept, because changing it would rename resources. A kind whose
//! default is unwanted takes `resource(path = "...")`, as `+kubebuilder:resource:path` does.
//!
//! flect only changes the last camel-case word of a name (`NetworkPolicy` → `NetworkPolicies`),
//! and tries, first match winning:
//! 1. the whole name in its dictionary of irregular and identical words;
//! 2. "already plural": the whole name or its last word (lower-cased) is a plural the
//!    dictionary knows;
//! 3. the last word (lower-cased) in the dictionary;
//! 4. suffix rules on the last word, case-sensitive (`suffix_rules`);
//! 5. a last word ending in `s` stays, anything else gets `s` appended.
//!
//! flect also extends its tables from `inflections.json` and `acronyms.json` in the directory
//! controller-gen runs in (or the files `INFLECT_PATH` / `ACRONYMS_PATH` name); such
//! per-project additions are not reproduced: use `resource(path = ...)` instead.
//!
//! A crate of its own so that the macros (the CRD's names) and `cargo xtask create api` (the
//! reconciler's RBAC rules) derive the same plural from one implementation.

#![warn(missing_docs)]

/// The default plural of `kind`: `CronJob` → `cronjobs`, `Policy` → `policies`, `Gizmo` →
/// `gizmoes`, `FancyPerson` → `fancypeople`, `Sheep` → `sheep`.
pub fn plural(kind: &str) -> String {
    // flect re-capitalizes a dictionary plural that replaces a capitalized word; the letter
    // case of the result is irrelevant once lower-cased, so `pluralize` does not bother.
    pluralize(kind).to_lowercase()
}

/// flect's `Pluralize`, up to the letter case of the result.
fn pluralize(original: &str) -> String {
    let Some(last) = last_word(original) else {
        return String::new();
    };
    let last_lower = last.to_lowercase();
    if let Some(word) = dictionary_entry(original) {
        return word.plural.to_owned();
    }
    if is_known_plural(original) || is_known_plural(&last_lower) {
        return original.to_owned();
    }
    if let Some(word) = dictionary_entry(&last_lower) {
        return replace_last_word(original, &last, word.plural);
    }
    for (singular, plural) in suffix_rules() {
        // Every rule also recognises its own result as already plural, and that check comes
        // first: `Policies` stays, it does not become `Policieses`.
        if last.ends_with(plural) {
            return original.to_owned();
        }
        if let Some(stem) = last.strip_suffix(singular) {
            return replace_last_word(original, &last, &format!("{stem}{plural}"));
        }
    }
    if last_lower.ends_with('s') {
        original.to_owned()
    } else {
        format!("{original}s")
    }
}

/// Swaps `last` (the name's last word) for `replacement` at the end of `original`. flect
/// upper-cases a last word that is an acronym (`MyDns` ends in the word `DNS`), and then the
/// word is not a suffix of the name: the replacement is appended to the whole name, as flect
/// does (`MyIPs` → `myipsipses`).
fn replace_last_word(original: &str, last: &str, replacement: &str) -> String {
    let kept = original.strip_suffix(last).unwrap_or(original);
    format!("{kept}{replacement}")
}

/// The rules flect tries, in its order: first a rule per dictionary word (so `Salesperson`
/// ends like `person`), then the general suffix rules. Each is `(singular suffix, plural
/// suffix)`.
fn suffix_rules() -> impl Iterator<Item = (&'static str, &'static str)> {
    DICTIONARY
        .iter()
        .filter(|word| word.in_compounds)
        .map(|word| (word.singular, word.plural))
        .chain(SUFFIXES.iter().copied())
}

fn dictionary_entry(word: &str) -> Option<&'static Word> {
    DICTIONARY.iter().find(|entry| entry.singular == word)
}

fn is_known_plural(word: &str) -> bool {
    DICTIONARY.iter().any(|entry| {
        entry.plural_is_recognised && (entry.plural == word || entry.alternative == Some(word))
    })
}

/// One dictionary word of flect's.
struct Word {
    singular: &'static str,
    plural: &'static str,
    /// Another accepted plural: also recognised as already plural.
    alternative: Option<&'static str>,
    /// False where flect keeps the plural out of its "already plural" set because the plural
    /// belongs to another word (`bases` to `base`, `ellipses` to `ellipse`).
    plural_is_recognised: bool,
    /// False where the word is too short or too common to act as a suffix rule: `ox` must not
    /// make `Box` `Boxen`. The word itself, as a whole last word, still counts (`MyOx`).
    in_compounds: bool,
}

const fn word(singular: &'static str, plural: &'static str) -> Word {
    Word {
        singular,
        plural,
        alternative: None,
        plural_is_recognised: true,
        in_compounds: true,
    }
}

/// A word whose plural is itself: identical plurals (`sheep`) and uncountables (`news`).
const fn same(form: &'static str) -> Word {
    word(form, form)
}

impl Word {
    const fn or(self, alternative: &'static str) -> Self {
        Word {
            alternative: Some(alternative),
            ..self
        }
    }

    const fn one_way(self) -> Self {
        Word {
            plural_is_recognised: false,
            ..self
        }
    }

    const fn not_in_compounds(self) -> Self {
        Word {
            in_compounds: false,
            ..self
        }
    }
}

/// flect's dictionary, listed in the order its compound-word rules are tried (a word listed
/// earlier wins: `woman` before `man`). Lookups of whole words do not depend on the order.
const DICTIONARY: &[Word] = &[
    // Abbreviations.
    word("ID", "IDs").not_in_compounds(),
    // Exceptions to the -o → -oes rule and to Latin plurals.
    same("graffiti"),
    word("toe", "toes").not_in_compounds(),
    word("shoe", "shoes"),
    word("formula", "formulas").or("formulae"),
    word("agenda", "agendas"),
    word("pretorium", "pretoriums"),
    // Exceptions to the -y → -ies and -f(e) → -ves rules.
    word("cookie", "cookies"),
    word("movie", "movies"),
    word("move", "moves"),
    word("hive", "hives"),
    word("chive", "chives"),
    word("thief", "thieves"),
    word("hoof", "hoofs").or("hooves"),
    word("dwarf", "dwarfs").or("dwarves"),
    // Uncountables.
    same("rice"),
    same("news"),
    same("money"),
    same("jeans"),
    same("information"),
    same("equipment"),
    // Words ending in -ch, -o, -s, -sh, -x, -z that the suffix rules would get wrong.
    word("tomato", "tomatoes"),
    word("potato", "potatoes"),
    word("buffalo", "buffaloes").or("buffalos"),
    word("topaz", "topazes"),
    word("ache", "aches"),
    word("pause", "pauses"),
    word("muse", "muses"),
    word("misuse", "misuses"),
    word("house", "houses"),
    word("fuse", "fuses"),
    word("excuse", "excuses"),
    word("cruse", "cruses"),
    word("clause", "clauses"),
    word("cause", "causes"),
    word("abuse", "abuses"),
    word("use", "uses").not_in_compounds(),
    word("vedalia", "vedalias"),
    word("alias", "aliases").not_in_compounds(),
    // Latin -is → -es.
    word("basis", "bases").one_way(),
    word("base", "bases"),
    word("testis", "testes"),
    word("thesis", "theses"),
    word("oasis", "oases"),
    word("genesis", "geneses"),
    word("ellipsis", "ellipses").one_way(),
    word("crisis", "crises"),
    word("axis", "axes").not_in_compounds(),
    // Latin -ex and -ix → -ices.
    word("helix", "helices").or("helixes"),
    word("radix", "radices").or("radixes"),
    word("appendix", "appendices").or("appendixes"),
    word("vortex", "vortices").or("vortexes"),
    word("vertex", "vertices").or("vertexes"),
    word("latex", "latices").or("latexes"),
    word("index", "indices").or("indexes"),
    word("codex", "codices").or("codexes"),
    word("apex", "apices").or("apexes"),
    // Latin -a → -ae.
    word("uva", "uvae"),
    word("praecava", "praecavae"),
    word("postcava", "postcavae"),
    word("larva", "larvae"),
    word("vita", "vitae"),
    word("minutia", "minutiae"),
    word("differentia", "differentiae"),
    word("vertebra", "vertebrae"),
    word("alumna", "alumnae"),
    // Latin -us → -i or -era (`octupuses` is flect's spelling).
    word("genus", "genera"),
    word("corpus", "corpora").or("corpuses"),
    word("syllabus", "syllabi"),
    word("radius", "radii").or("radiuses"),
    word("octopus", "octupuses").or("octopi"),
    word("nucleus", "nuclei").or("nucleuses"),
    word("locus", "loci").or("locuses"),
    word("focus", "foci").or("focuses"),
    word("coccus", "cocci"),
    word("cactus", "cacti").or("cactuses"),
    word("bacillus", "bacilli"),
    word("alumnus", "alumni").or("alumnuses"),
    // Latin -um → -a, and its exceptions.
    word("quota", "quotas"),
    word("curriculum", "curriculums").or("curricula"),
    word("symposium", "symposia").or("symposiums"),
    word("auditorium", "auditoria").or("auditoriums"),
    word("aquarium", "aquaria").or("aquariums"),
    word("stadium", "stadiums").or("stadia"),
    word("medium", "media").or("mediums").one_way(),
    same("media"),
    // Greek -on → -a.
    word("taxon", "taxa"),
    word("phenomenon", "phenomena"),
    word("noumenon", "noumena"),
    word("mitochondrion", "mitochondria").or("mitochondrions"),
    word("lexicon", "lexica").or("lexicons"),
    word("ganglion", "ganglia").or("ganglions"),
    word("criterion", "criteria"),
    // French -u → -ux.
    word("bureau", "bureaus").or("bureaux"),
    word("fabliau", "fabliaux"),
    word("adieu", "adieux").or("adieus"),
    // Irregular English plurals (vowel change, -en, others).
    word("person", "people"),
    word("die", "dice").not_in_compounds(),
    word("woman", "women"),
    word("tooth", "teeth"),
    word("mouse", "mice"),
    word("louse", "lice").not_in_compounds(),
    word("human", "humans"),
    word("man", "men"),
    word("goose", "geese"),
    word("foot", "feet"),
    word("ox", "oxen").not_in_compounds(),
    word("child", "children"),
    // Identical singular and plural.
    same("you"),
    same("tuna").or("tunas"),
    same("trout").or("trouts"),
    same("swine").or("swines"),
    same("species"),
    same("shrimp").or("shrimps"),
    same("sheep"),
    same("series"),
    same("salmon").or("salmons"),
    same("police"),
    same("moose"),
    same("fish").or("fishes"),
    same("deer"),
    same("chassis"),
    same("blues").one_way(),
    same("bison"),
    same("beef").or("beefs"),
    same("aircraft"),
];

/// flect's general suffix rules, `(singular suffix, plural suffix)`, in the order it tries
/// them (after the dictionary's): the more specific ending first.
const SUFFIXES: &[(&str, &str)] = &[
    // -f and -fe → -ves, except -tive (`Directive` → `Directives`).
    ("tive", "tives"),
    ("eaf", "eaves"),
    ("oaf", "oaves"),
    ("afe", "aves"),
    ("arf", "arves"),
    ("rfe", "rves"),
    ("rf", "rves"),
    ("lf", "lves"),
    ("fe", "ves"),
    // -y → -ies, except after a vowel (and -quy, whose u is no vowel sound).
    ("ay", "ays"),
    ("ey", "eys"),
    ("oy", "oys"),
    ("quy", "quies"),
    ("uy", "uys"),
    ("y", "ies"),
    // French -eau → -eaux.
    ("eau", "eaux"),
    // Latin -ula → -ulae. flect writes `bulae` for all five (`Nodula` → `nobulae`): kept, it is
    // what controller-gen names such a kind.
    ("bula", "bulae"),
    ("dula", "bulae"),
    ("lula", "bulae"),
    ("nula", "bulae"),
    ("vula", "bulae"),
    // Greek -hedron → -hedra.
    ("hedron", "hedra"),
    // Latin -um → -a, for the endings where that is the usual plural (-seum is not).
    ("ium", "ia"),
    ("seum", "seums"),
    ("eum", "ea"),
    ("oum", "oa"),
    ("stracum", "straca"),
    ("dum", "da"),
    ("elum", "ela"),
    ("ilum", "ila"),
    ("olum", "ola"),
    ("ulum", "ula"),
    ("llum", "lla"),
    ("ylum", "yla"),
    ("imum", "ima"),
    ("ernum", "erna"),
    ("gnum", "gna"),
    ("brum", "bra"),
    ("crum", "cra"),
    ("terum", "tera"),
    ("serum", "sera"),
    ("trum", "tra"),
    ("antum", "anta"),
    ("atum", "ata"),
    ("entum", "enta"),
    ("etum", "eta"),
    ("itum", "ita"),
    ("otum", "ota"),
    ("utum", "uta"),
    ("ctum", "cta"),
    ("ovum", "ova"),
    // Latin -trix → -trices.
    ("trix", "trices"),
    // Greek -is → -es, for the endings where that is safe (-sis alone is also -se's plural).
    ("iasis", "iases"),
    ("mesis", "meses"),
    ("kinesis", "kineses"),
    ("resis", "reses"),
    ("gnosis", "gnoses"),
    ("opsis", "opses"),
    ("ysis", "yses"),
    // Sibilants, -us (`Status` → `statuses`; -use words are in the dictionary) and -o take
    // -es, -ez and -iz doubling the z (`Quiz` → `quizzes`); -io, -ano, -lo, -to and -oo take
    // just -s (`Studio`, `Photo`).
    ("ouse", "ouses"),
    ("lause", "lauses"),
    ("us", "uses"),
    ("ch", "ches"),
    ("io", "ios"),
    ("sh", "shes"),
    ("ss", "sses"),
    ("ez", "ezzes"),
    ("iz", "izzes"),
    ("tz", "tzes"),
    ("zz", "zzes"),
    ("ano", "anos"),
    ("lo", "los"),
    ("to", "tos"),
    ("oo", "oos"),
    ("o", "oes"),
    ("x", "xes"),
    // An abbreviation ending in a capital S (`DNS` → `DNSes`); case-sensitive like every rule.
    ("S", "Ses"),
];

/// The last word of `name` as flect splits it, or `None` for a name without words.
///
/// Words break at separators and where an upper-case letter follows a non-upper-case one
/// (`NetworkPolicy`), or follows a run of capitals that is a known acronym (`DNSRecord` →
/// `DNS`, `Record`). A word that is an acronym in any case is upper-cased (`Dns` → `DNS`),
/// which matters because the suffix rules are case-sensitive.
///
/// ASCII names (all a kind can be: its lower case must be a DNS-1035 label) split exactly as
/// in flect; elsewhere Rust's Unicode classes stand in for Go's.
fn last_word(name: &str) -> Option<String> {
    let name = name.trim();
    if name.is_empty() {
        return None;
    }
    if is_acronym(name) {
        return Some(name.to_uppercase());
    }
    let mut words = Vec::new();
    let mut current = String::new();
    let mut previous_is_upper = false;
    for c in name.chars() {
        let starts_word =
            is_separator(c) || (c.is_uppercase() && (!previous_is_upper || is_acronym(&current)));
        if starts_word {
            // A separator starts the next word too; `push_word` trims it off again.
            push_word(&mut words, &current);
            current = c.to_string();
        } else if stays_in_word(c) {
            current.push(c);
        } else {
            // Anything else (`$`, `+`, ...) ends the word and is dropped.
            push_word(&mut words, &current);
            current.clear();
        }
        previous_is_upper = c.is_uppercase();
    }
    push_word(&mut words, &current);
    words.pop()
}

/// What flect treats as a word separator (besides whitespace), in the order it trims them off
/// a word's ends: one after the other, so `_-_x` keeps `_x`.
const SEPARATORS: [char; 5] = ['_', ' ', ':', '-', '/'];

fn is_separator(c: char) -> bool {
    SEPARATORS.contains(&c) || c.is_whitespace()
}

/// Letters, digits and Go's punctuation class (ASCII symbols such as `$` and `+` are not
/// punctuation to Go), plus the backquote, which flect keeps explicitly.
fn stays_in_word(c: char) -> bool {
    c.is_alphanumeric() || c == '`' || (c.is_ascii_punctuation() && !"$+<=>^|~".contains(c))
}

fn push_word(words: &mut Vec<String>, word: &str) {
    let word = SEPARATORS
        .iter()
        .fold(word.trim(), |word, &separator| word.trim_matches(separator));
    if word.is_empty() {
        return;
    }
    words.push(if is_acronym(word) {
        word.to_uppercase()
    } else {
        word.to_owned()
    });
}

fn is_acronym(word: &str) -> bool {
    ACRONYMS.contains(&word.to_uppercase().as_str())
}

/// flect's acronyms. It looks them up by the upper-cased word, so only its all-capitals
/// entries can ever match; its mixed-case ones (`WiFi`, `Mbps`, ...) are left out.
const ACRONYMS: &[&str] = &[
    "ACK", "ACL", "ADSL", "AES", "ANSI", "API", "ARP", "ATM", "BGP", "BSS", "CCITT", "CHAP",
    "CIDR", "CIR", "CLI", "CMOS", "CPE", "CPU", "CRC", "CRT", "CSMA", "DCE", "DEC", "DES", "DHCP",
    "DMI", "DNS", "DRAM", "DSL", "DSLAM", "DTE", "EHA", "EIA", "EIGRP", "EOF", "ESS", "FCC", "FCS",
    "FDDI", "FTP", "GBIC", "GEPOF", "HDLC", "HTML", "HTTP", "HTTPS", "IANA", "ICMP", "ID", "IDF",
    "IDS", "IEEE", "IETF", "IMAP", "IP", "IPS", "ISDN", "ISP", "JSON", "JWT", "LACP", "LAN",
    "LAPB", "LAPF", "LLC", "MAC", "MC", "MDF", "MIB", "MPLS", "MTU", "NAC", "NAT", "NBMA", "NIC",
    "NRZ", "NRZI", "NVRAM", "OK", "OSI", "OSPF", "OUI", "PAP", "PAT", "PC", "PCM", "PDU", "PIM",
    "POP3", "POTS", "PPP", "PPTP", "PTT", "PVST", "RAM", "RARP", "RCP", "RFC", "RIP", "RLL", "ROM",
    "RSTP", "RTP", "SDLC", "SFD", "SFP", "SLARP", "SLIP", "SMTP", "SNA", "SNAP", "SNMP", "SOF",
    "SQL", "SRAM", "SSH", "SSID", "STP", "SYN", "TDM", "TFTP", "TIA", "TOFU", "UDP", "URI", "URL",
    "USB", "UTF8", "UTP", "UUID", "VC", "VLAN", "VLSM", "VPN", "W3C", "WAN", "WEP", "WPA", "WWW",
];

#[cfg(test)]
mod tests {
    use std::io::Write as _;
    use std::path::{Path, PathBuf};
    use std::process::{Command, Stdio};

    use super::plural;

    #[test]
    fn pluralizes_kinds_like_controller_gen() {
        // Expected values are flect v1.0.3's, quirks included (`videoes`, `romen`, `dnsdnses`).
        for (kind, expected) in [
            ("CronJob", "cronjobs"),
            ("NetworkPolicy", "networkpolicies"),
            ("Gateway", "gateways"),
            ("Gizmo", "gizmoes"),
            ("Hero", "heroes"),
            ("Video", "videoes"),
            ("Photo", "photos"),
            ("Studio", "studios"),
            ("Ingress", "ingresses"),
            ("Status", "statuses"),
            ("Endpoints", "endpoints"),
            ("Movies", "movies"),
            ("Policies", "policies"),
            ("Analysis", "analyses"),
            ("Basis", "bases"),
            ("Matrix", "matrices"),
            ("Index", "indices"),
            ("Box", "boxes"),
            ("Quiz", "quizzes"),
            ("Leaf", "leaves"),
            ("Wolf", "wolves"),
            ("Knife", "knives"),
            ("Safe", "saves"),
            ("Chief", "chiefs"),
            ("Thief", "thieves"),
            ("Directive", "directives"),
            ("Plateau", "plateaux"),
            ("Bureau", "bureaus"),
            ("Datum", "data"),
            ("Criterion", "criteria"),
            ("Nodula", "nobulae"),
            ("Octopus", "octupuses"),
            ("Cactus", "cacti"),
            ("Alias", "aliases"),
            ("Person", "people"),
            ("FancyPerson", "fancypeople"),
            ("Salesperson", "salespeople"),
            ("Human", "humans"),
            ("Roman", "romen"),
            ("Sheep", "sheep"),
            ("Series", "series"),
            ("Price", "price"),
            ("Ox", "oxen"),
            ("MyOx", "myoxen"),
            ("ID", "ids"),
            ("DNS", "dnses"),
            ("DNSRecord", "dnsrecords"),
            ("Dns", "dnsdnses"),
            ("MyIPs", "myipsipses"),
        ] {
            assert_eq!(plural(kind), expected, "{kind}");
        }
    }

    #[test]
    fn a_name_without_words_has_no_plural() {
        assert_eq!(plural(""), "");
        assert_eq!(plural("_"), "");
    }

    /// Kinds from Kubernetes and popular CRDs, the examples above, and names reaching the
    /// splitting corners (acronyms, separators, digits); separated by spaces.
    const KINDS: &str = "\
        Pod Service Deployment StatefulSet DaemonSet ReplicaSet ReplicationController Job \
        CronJob ConfigMap Secret Namespace Node PersistentVolume PersistentVolumeClaim \
        StorageClass VolumeAttachment CSIDriver CSINode CSIStorageCapacity Ingress IngressClass \
        NetworkPolicy Endpoints EndpointSlice Lease LeaseCandidate Event LimitRange \
        ResourceQuota ServiceAccount Role RoleBinding ClusterRole ClusterRoleBinding \
        PodDisruptionBudget HorizontalPodAutoscaler PriorityClass RuntimeClass \
        CustomResourceDefinition APIService MutatingWebhookConfiguration \
        ValidatingWebhookConfiguration ValidatingAdmissionPolicy \
        ValidatingAdmissionPolicyBinding CertificateSigningRequest TokenReview \
        SubjectAccessReview SelfSubjectRulesReview ComponentStatus Binding PodTemplate \
        ControllerRevision FlowSchema PriorityLevelConfiguration ResourceClaim \
        ResourceClaimTemplate ResourceSlice DeviceClass IPAddress ServiceCIDR StorageVersion \
        StorageVersionMigration VolumeAttributesClass ClusterTrustBundle Certificate \
        CertificateRequest Issuer ClusterIssuer Order Challenge Gateway GatewayClass HTTPRoute \
        GRPCRoute TCPRoute TLSRoute UDPRoute ReferenceGrant BackendTLSPolicy ServiceMonitor \
        PodMonitor PrometheusRule Prometheus Alertmanager AlertmanagerConfig ThanosRuler Probe \
        ScrapeConfig VirtualService DestinationRule ServiceEntry Sidecar AuthorizationPolicy \
        PeerAuthentication EnvoyFilter WorkloadEntry Telemetry Application AppProject \
        ApplicationSet Rollout AnalysisTemplate AnalysisRun Experiment Kustomization HelmRelease \
        HelmRepository GitRepository Bucket OCIRepository ImagePolicy ImageRepository Workflow \
        WorkflowTemplate Sensor EventSource EventBus Kafka KafkaTopic KafkaConnect Cluster \
        Machine MachineDeployment MachineSet MachineHealthCheck Backup Restore Schedule \
        BackupStorageLocation VolumeSnapshot VolumeSnapshotClass VolumeSnapshotContent Provider \
        Composition CompositeResourceDefinition ExternalSecret SecretStore ClusterSecretStore \
        SealedSecret ScaledObject ScaledJob TriggerAuthentication Memcached Guestbook Registry \
        Proxy Policy Status Matrix Index Alias Bus Virus Radius Cactus Octopus Analysis Basis \
        Crisis Hero Echo Memo Gizmo Potato Studio Video Radio Photo Leaf Wolf Knife Life Roof \
        Chief Thief Safe Quiz Fox Box Church Wish Kiss Datum Medium Criterion Phenomenon Child \
        Person Man Human Woman Mouse Goose Foot Tooth Ox Sheep Fish Deer Series Species Buzz \
        Waltz Bayou Piano Tornado Zoo Movie Cookie Plateau Bureau Polyhedron Vortex Directive \
        Nodula Specimen Price Roman MyPolicy FancyPerson Salesperson DNSRecord Foo FooBar ID Id \
        MyID UserID IDs APIKey OAuthClient DNS Dns MyDns MyIPs TLS HTTPSProxy URL WiFi My_Policy \
        my-person Person2 V1Policy Sheep3 Movies Statuses Policies";

    /// The Go peer: `tests/flect` prints `strings.ToLower(flect.Pluralize(word))` per line.
    fn peer() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/flect")
    }

    /// `go` in the peer module, with flect's own tables only: the variables that would make
    /// it read extra inflections or acronyms are removed.
    fn go() -> Command {
        let mut command = Command::new("go");
        command
            .current_dir(peer())
            .env("GOWORK", "off")
            .env_remove("INFLECT_PATH")
            .env_remove("ACRONYMS_PATH");
        command
    }

    fn run(command: &mut Command, stdin: &str) -> String {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("running {command:?} (is Go installed?): {e}"));
        child
            .stdin
            .take()
            .expect("stdin is piped")
            .write_all(stdin.as_bytes())
            .expect("writing to go");
        let output = child.wait_with_output().expect("waiting for go");
        assert!(
            output.status.success(),
            "{command:?} failed:\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).expect("go prints UTF-8")
    }

    /// A source file of the flect module the peer builds with, from the Go module cache.
    fn flect_source(file: &str) -> String {
        let dir = run(
            go().args(["list", "-m", "-f", "{{.Dir}}", "github.com/gobuffalo/flect"]),
            "",
        );
        let path = Path::new(dir.trim()).join(file);
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
    }

    /// The strings quoted in `line`, in order.
    fn quoted(line: &str) -> Vec<&str> {
        line.split('"').skip(1).step_by(2).collect()
    }

    fn capitalized(word: &str) -> String {
        let mut chars = word.chars();
        chars
            .next()
            .map(|first| first.to_uppercase().chain(chars).collect())
            .unwrap_or_default()
    }

    /// flect's dictionary as written in its source: per word, the quoted values of its
    /// `singular`, `plural` and `alternative` fields, in that order.
    fn dictionary_of(rules: &str) -> Vec<Vec<&str>> {
        let dictionary: Vec<Vec<&str>> = rules
            .lines()
            .filter(|line| line.contains("singular: \""))
            .map(|line| {
                ["singular: \"", "plural: \"", "alternative: \""]
                    .into_iter()
                    .filter_map(|key| line.split_once(key))
                    .filter_map(|(_, rest)| rest.split_once('"').map(|(word, _)| word))
                    .collect()
            })
            .collect();
        // Each table must be found, so a change in flect's file layout fails the tests instead
        // of testing less.
        assert!(dictionary.len() > 100, "flect's dictionary: {dictionary:?}");
        dictionary
    }

    /// flect's suffix rules as written in its source: `{"singular", "plural"},` lines.
    fn suffixes_of(rules: &str) -> Vec<(&str, &str)> {
        let suffixes: Vec<(&str, &str)> = rules
            .lines()
            .map(str::trim)
            .filter(|line| line.starts_with("{\"") && line.contains("\"},"))
            .filter_map(|line| match quoted(line)[..] {
                [singular, plural] => Some((singular, plural)),
                _ => None,
            })
            .collect();
        assert!(suffixes.len() > 70, "flect's suffix rules: {suffixes:?}");
        suffixes
    }

    /// flect's acronyms as written in its source: `"ACRONYM": true,` lines.
    fn acronyms_of(acronyms: &str) -> Vec<&str> {
        let acronyms: Vec<&str> = acronyms
            .lines()
            .map(str::trim)
            .filter(|line| line.starts_with('"') && line.ends_with("true,"))
            .filter_map(|line| quoted(line).first().copied())
            .collect();
        assert!(acronyms.len() > 100, "flect's acronyms: {acronyms:?}");
        acronyms
    }

    /// Our tables hold flect's data in flect's precedence order. (Plurals, alternatives and
    /// flags are checked by their effect, in the differential test.)
    #[test]
    fn tables_follow_flect_sources() {
        let rules = flect_source("plural_rules.go");
        let suffixes = suffixes_of(&rules);
        assert_eq!(super::SUFFIXES, &suffixes[..]);

        // flect inserts each dictionary word's compound rule in front of the previous ones,
        // so it tries them last word first: the order of our table.
        let mut singulars: Vec<&str> = dictionary_of(&rules)
            .into_iter()
            .map(|fields| fields[0])
            .collect();
        singulars.reverse();
        let ours: Vec<&str> = super::DICTIONARY.iter().map(|word| word.singular).collect();
        assert_eq!(ours, singulars);

        let source = flect_source("acronyms.go");
        let mut acronyms: Vec<&str> = acronyms_of(&source)
            .into_iter()
            .filter(|acronym| acronym.to_uppercase() == *acronym)
            .collect();
        acronyms.sort_unstable();
        assert_eq!(super::ACRONYMS, &acronyms[..]);
    }

    /// Words built from flect's own tables, read from its sources at test time: every
    /// dictionary word (singular, plural and alternative) alone and at the end of a compound,
    /// every suffix rule's two sides after a stem, and every acronym alone and inside names.
    fn words_from_flect_tables() -> Vec<String> {
        let rules = flect_source("plural_rules.go");
        let acronyms = flect_source("acronyms.go");
        let mut words = Vec::new();
        for word in dictionary_of(&rules).into_iter().flatten() {
            let word_capitalized = capitalized(word);
            words.extend([
                word.to_owned(),
                format!("my{word}"),
                format!("My{word_capitalized}"),
                word_capitalized,
            ]);
        }
        for (singular, plural) in suffixes_of(&rules) {
            for side in [singular, plural] {
                words.extend([format!("kube{side}"), format!("Kube{side}")]);
            }
        }
        for acronym in acronyms_of(&acronyms) {
            let word = capitalized(&acronym.to_lowercase());
            words.extend([
                format!("My{acronym}"),
                format!("My{acronym}Policy"),
                format!("My{acronym}s"),
                format!("My{word}"),
                acronym.to_owned(),
                word,
            ]);
        }
        words
    }

    /// Differential test against the real peer: flect v1.0.3, run by Go on every word.
    #[test]
    fn agrees_with_flect_on_kinds_and_on_flect_own_tables() {
        let mut words: Vec<String> = KINDS.split_whitespace().map(str::to_owned).collect();
        words.extend(words_from_flect_tables());
        let expected = run(go().args(["run", "."]), &(words.join("\n") + "\n"));
        let expected: Vec<&str> = expected.lines().collect();
        assert_eq!(
            expected.len(),
            words.len(),
            "the peer prints a line per word"
        );

        let disagreements: Vec<String> = words
            .iter()
            .zip(expected)
            .filter_map(|(word, flect)| {
                let ours = plural(word);
                (ours != flect).then(|| format!("{word}: flect {flect}, ours {ours}"))
            })
            .collect();
        assert!(
            disagreements.is_empty(),
            "{} of {} words pluralized differently:\n{}",
            disagreements.len(),
            words.len(),
            disagreements.join("\n")
        );
    }
}
