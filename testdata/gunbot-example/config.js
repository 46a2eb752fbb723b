module.exports = {
  "pairs": {
    "binance": {
      "USDT-BTC": {
        "strategy": "gain",
        "enabled": true,
        "override": { "GAIN": 1.5, "BUYLVL": 0.8, "TRADING_LIMIT": 150 }
      },
      "USDT-ETH": {
        "strategy": "stepgrid",
        "enabled": false,
        "override": {}
      }
    }
  },
  "strategies": {
    "gain": { "STRATEGY": "gain", "BUY_METHOD": "gain", "SELL_METHOD": "gain", "GAIN": 1, "BUYLVL": 0.6, "TRADING_LIMIT": 100, "EMA_PERIOD": 16 },
    "stepgrid": { "STRATEGY": "stepgrid", "STEP": 1, "TRADING_LIMIT": 100 },
    "manual": { "STRATEGY": "manual" }
  },
  "exchanges": {
    "binance": {
      "masterkey": "IMPORTED-BINANCE-KEY-abc123",
      "mastersecret": "IMPORTED-BINANCE-SECRET-def456",
      "isEncrypted": false,
      "delay": 5,
      "TRADING_FEES": 0.1
    },
    "kraken": {
      "key": "U2FsdGVkX1+gunbotEncryptedBlob==",
      "secret": "U2FsdGVkX1+gunbotEncryptedSecret==",
      "isEncrypted": true,
      "delay": 5
    }
  },
  "bot": {
    "service_wallet": "0x1111222233334444555566667777888899990000",
    "SIMULATOR": true,
    "TIMEZONE": "Europe/Amsterdam",
    "WATCH_MODE": false
  },
  "GUI": { "start": true, "theme": "dark" },
  "imap_listener": { "enabled": false }
};
