"""Which language the reader gets: --lang, CONDA_TORCHCHECK_LANG, the POSIX locale as gettext reads it, Windows UI."""

from __future__ import annotations

import pytest

from conda_torchcheck.messages import (
    current_language,
    detect_language,
    language_from_windows_langid,
    msg,
    normalize_language,
    set_language,
    supported_language,
    translate,
)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("zh_CN.UTF-8", "zh_CN"),
        ("zh_CN.GB18030", "zh_CN"),
        ("zh-Hans", "zh_CN"),
        ("zh_TW.UTF-8", "zh_CN"),
        ("zh", "zh_CN"),
        ("en_US.UTF-8", "en"),
        ("C", "en"),
        ("C.UTF-8", "en"),
        ("POSIX", "en"),
        ("de_DE.UTF-8", None),
        ("", None),
        (None, None),
    ],
)
def test_supported_language(value, expected):
    assert supported_language(value) == expected
    assert normalize_language(value) == (expected or "en")


def test_gettext_precedence_lc_all_over_lc_messages_over_lang():
    assert detect_language({"LANG": "zh_CN.UTF-8"}, is_windows=False) == "zh_CN"
    assert detect_language({"LANG": "zh_CN.UTF-8", "LC_MESSAGES": "en_US.UTF-8"}, is_windows=False) == "en"
    assert (
        detect_language({"LANG": "en_US.UTF-8", "LC_MESSAGES": "en_US", "LC_ALL": "zh_CN.UTF-8"}, is_windows=False)
        == "zh_CN"
    )
    # an empty variable counts as unset, as in gettext
    assert detect_language({"LC_ALL": "", "LANG": "zh_CN.UTF-8"}, is_windows=False) == "zh_CN"


def test_language_list_is_used_unless_the_locale_is_c():
    env = {"LANG": "en_US.UTF-8", "LANGUAGE": "de:zh_CN:en"}
    assert detect_language(env, is_windows=False) == "zh_CN"  # first supported entry of the list
    assert detect_language({"LANG": "C", "LANGUAGE": "zh_CN"}, is_windows=False) == "en"
    assert detect_language({"LANGUAGE": "zh_CN"}, is_windows=False) == "en"  # no locale at all: LANGUAGE ignored


def test_unsupported_locale_falls_back_to_english():
    assert detect_language({"LANG": "fr_FR.UTF-8"}, is_windows=False) == "en"


def test_tool_variable_wins_over_locale():
    assert detect_language({"CONDA_TORCHCHECK_LANG": "zh_CN", "LC_ALL": "en_US.UTF-8"}, is_windows=False) == "zh_CN"
    assert detect_language({"CONDA_TORCHCHECK_LANG": "en", "LANG": "zh_CN.UTF-8"}, is_windows=False) == "en"
    # an unsupported value is ignored rather than forcing English
    assert detect_language({"CONDA_TORCHCHECK_LANG": "xx", "LANG": "zh_CN.UTF-8"}, is_windows=False) == "zh_CN"


def test_windows_ui_language_when_no_locale_variable():
    assert detect_language({}, is_windows=True, windows_ui=lambda: 0x0804) == "zh_CN"  # zh-CN
    assert detect_language({}, is_windows=True, windows_ui=lambda: 0x0404) == "zh_CN"  # zh-TW reads Simplified
    assert detect_language({}, is_windows=True, windows_ui=lambda: 0x0409) == "en"  # en-US
    assert detect_language({}, is_windows=True, windows_ui=lambda: None) == "en"
    # Git Bash and MSYS set LANG: it wins over the UI language, as on POSIX
    assert detect_language({"LANG": "en_US.UTF-8"}, is_windows=True, windows_ui=lambda: 0x0804) == "en"
    assert language_from_windows_langid(0x1004) == "zh_CN"


def test_lang_option_wins(monkeypatch):
    monkeypatch.setenv("LANG", "zh_CN.UTF-8")
    assert current_language() == "zh_CN"
    set_language("en")
    assert current_language() == "en"
    set_language(None)
    assert current_language() == "zh_CN"


def test_nested_messages_follow_the_language():
    inner = msg("severity.error")
    assert translate("cli.error_prefix", "zh_CN", message=inner) == "conda-torchcheck：错误：错误"
    assert translate("cli.error_prefix", "en", message=inner) == "conda-torchcheck: error: error"


def test_cli_lang_option_and_environment(make_env, capsys, monkeypatch):
    from conda_torchcheck.cli.main import main

    text = "OSError: [WinError 126] 找不到指定的模块。"
    main(["explain", "--no-env", "--lang", "zh_CN", text])
    assert "可能的原因" in capsys.readouterr().out
    monkeypatch.setenv("LANG", "zh_CN.UTF-8")
    main(["explain", "--no-env", text])
    assert "可能的原因" in capsys.readouterr().out
    main(["explain", "--no-env", "--lang", "en", text])
    assert "Likely causes" in capsys.readouterr().out
