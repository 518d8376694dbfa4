// swift-tools-version:6.1
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny")
]

/// The folders of console templates (`Sources/Backoffice/<Domain>/Pages/*.mustache`): the console shell's and
/// each domain's. Processing flattens them into the bundle's root, so a template's name is unique across the
/// console (SwiftPM refuses two resources of one name). A new domain with pages adds its folder here.
let consolePages: [Resource] = [
    "Accounts", "Articles", "Audit", "Badges", "Billing", "Challenges", "ContentPolicies", "DualControl", "Editorial",
    "FitPoints",
    "Foods", "Goods",
    "HealthProfiles", "Mail", "Messages", "Moderation", "Orders", "Plans", "Recommendations", "Reports",
    "Shops", "Tenancy", "WebhookEndpoints",
].map { .process("\($0)/Pages") }

/// The libraries the service's two layers both build on (the platform, and the domains above it).
let serviceLibraries: [Target.Dependency] = [
    .product(name: "Hummingbird", package: "hummingbird"),
    .product(name: "OpenAPIHummingbird", package: "swift-openapi-hummingbird"),
    .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
    .product(name: "PostgresNIO", package: "postgres-nio"),
    .product(name: "Logging", package: "swift-log"),
    .product(name: "Metrics", package: "swift-metrics"),
    .product(name: "Prometheus", package: "swift-prometheus"),
    .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
    .product(name: "Crypto", package: "swift-crypto"),
    .product(name: "Yams", package: "Yams"),
    .product(name: "NIOSSL", package: "swift-nio-ssl"),
    .product(name: "NIOCore", package: "swift-nio"),
    .product(name: "AsyncHTTPClient", package: "async-http-client"),
]

let package = Package(
    name: "healthtrack-backoffice",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "backoffice", targets: ["backoffice"]),
        .executable(name: "bench-floor", targets: ["BenchFloor"]),
        .executable(name: "screen-bench", targets: ["ScreenBench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/swift-openapi-hummingbird.git", from: "2.1.0"),
        .package(url: "https://github.com/apple/swift-openapi-generator.git", from: "1.14.3"),
        .package(url: "https://github.com/apple/swift-openapi-runtime.git", from: "1.13.4"),
        .package(url: "https://github.com/swift-server/swift-openapi-async-http-client.git", from: "1.5.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/jpsim/Yams.git", "5.0.1"..<"7.0.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/yaslab/CSV.swift.git", from: "2.5.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth.git", from: "2.5.0"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache.git", from: "2.1.1"),
        .package(url: "https://github.com/swift-extras/swift-extras-base64.git", from: "1.2.0"),
        .package(url: "https://github.com/vapor/multipart-kit.git", from: "4.7.1"),
    ],
    targets: [
        // GitHub's CommonMark reference implementation, linked from the system (Debian's
        // libcmark-gfm-dev and libcmark-gfm-extensions-dev; `ops/install-deps` installs them).
        .systemLibrary(
            name: "CCmarkGFM",
            providers: [.apt(["libcmark-gfm-dev", "libcmark-gfm-extensions-dev"])]
        ),
        // The benchmarks' floor: a bare Hummingbird + PostgresNIO server running a pgbench script per request
        // (ops/bench).
        .executableTarget(
            name: "BenchFloor",
            dependencies: [
                "BackofficePlatform",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // The HTTP contract: types, server stubs and client, generated from openapi.yaml.
        .target(
            name: "BackofficeAPI",
            dependencies: [
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime")
            ],
            resources: [.copy("openapi.yaml")],
            swiftSettings: swiftSettings,
            plugins: [.plugin(name: "OpenAPIGenerator", package: "swift-openapi-generator")]
        ),
        // The platform: edge, database, audit append, idempotency, policy engine, metrics registry, lifecycle.
        // It names no domain, and cannot: the domains are built on top of it.
        .target(
            name: "BackofficePlatform",
            dependencies: ["BackofficeAPI", .product(name: "CSV", package: "CSV.swift")] + serviceLibraries,
            swiftSettings: swiftSettings
        ),
        // The console's shell: sessions, sign-in, forms, templates, charts, time formatting. It names no
        // domain: each domain's pages register on it.
        .target(
            name: "BackofficeConsole",
            dependencies: [
                "BackofficePlatform",
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
                .product(name: "HummingbirdOTP", package: "hummingbird-auth"),
                .product(name: "ExtrasBase64", package: "swift-extras-base64"),
                .product(name: "MultipartKit", package: "multipart-kit"),
                .product(name: "Mustache", package: "swift-mustache"),
            ] + serviceLibraries,
            resources: [.process("Pages"), .copy("Assets"), .copy("common-passwords.txt")],
            swiftSettings: swiftSettings
        ),
        // The domains and the composition root, on BackofficePlatform and BackofficeConsole.
        .target(
            name: "Backoffice",
            dependencies: [
                "BackofficeAPI",
                "BackofficePlatform",
                "BackofficeConsole",
                "CCmarkGFM",
            ] + serviceLibraries,
            resources: consolePages + [.copy("Privacy/customer-data.yaml")],
            swiftSettings: swiftSettings
        ),
        // The moderation screen's micro-benchmark (`ops/bench/run` runs it in release).
        .executableTarget(
            name: "ScreenBench", dependencies: ["Backoffice", "BackofficePlatform"], swiftSettings: swiftSettings),
        // The demo data of `backoffice dev`, made through the service's own operations (not part of the service).
        .target(
            name: "BackofficeDemo",
            dependencies: [
                "Backoffice",
                "BackofficeConsole",
                "BackofficePlatform",
                "BackofficeAPI",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            resources: [.copy("Data")],
            swiftSettings: swiftSettings
        ),
        // The `backoffice` command line: server commands and the API client.
        .executableTarget(
            name: "backoffice",
            dependencies: [
                "Backoffice",
                "BackofficeConsole",
                "BackofficePlatform",
                "BackofficeDemo",
                "BackofficeAPI",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "OpenAPIAsyncHTTPClient", package: "swift-openapi-async-http-client"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            swiftSettings: swiftSettings,
            plugins: ["CLICommands"]
        ),
        // The CLI's routine commands, generated from the contract's `x-cli` blocks at build time.
        .executableTarget(
            name: "CLIGenerator", dependencies: [.product(name: "Yams", package: "Yams")],
            swiftSettings: swiftSettings),
        .plugin(name: "CLICommands", capability: .buildTool(), dependencies: ["CLIGenerator"]),
        .testTarget(
            name: "BackofficeTests",
            dependencies: [
                "Backoffice",
                "BackofficeConsole",
                "BackofficePlatform",
                "BackofficeDemo",
                "BackofficeAPI",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            // read from the checkout by `ScreeningCorpusTests`
            exclude: ["Moderation/screening-corpus.tsv"],
            swiftSettings: swiftSettings
        ),
    ]
)
