{
  "targets": [{
    "target_name": "quire",
    "sources": ["src/addon.cc"],
    "include_dirs": [
      "<!(node -p \"require('node-addon-api').include_dir\")",
      "<!(node scripts/paths.js include)"
    ],
    "libraries": ["<!(node scripts/paths.js lib)", "-lutf8proc"],
    "ldflags": ["<!@(node scripts/paths.js ldflags)"],
    "defines": ["NAPI_VERSION=8", "NAPI_CPP_EXCEPTIONS"],
    "cflags!": ["-fno-exceptions"],
    "cflags_cc!": ["-fno-exceptions", "-std=gnu++17"],
    "cflags_cc": ["-std=c++17", "-fexceptions", "-Wall", "-Wextra"]
  }]
}
