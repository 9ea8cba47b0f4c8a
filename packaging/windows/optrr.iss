; Inno Setup 6 script: per-user installer for the OptRR Windows bundle (no administrator rights needed).
;
; Build the bundle first (python packaging\build.py runs this script when ISCC.exe is found), or by hand:
;   iscc /DSourceDir=C:\path\to\packaging\dist\optrr /DAppVersion=0.1.0 /OC:\path\to\packaging\dist packaging\windows\optrr.iss
; SourceDir defaults to ..\dist\optrr next to this script, AppVersion to the bundle's VERSION file.
;
; The default installs into %LOCALAPPDATA%\Programs\OptRR with Start-menu entries for the current user only;
; an administrator may choose "install for all users" in the first dialog.

#ifndef SourceDir
  #define SourceDir AddBackslash(SourcePath) + "..\dist\optrr"
#endif
#ifndef AppVersion
  #define VersionFile FileOpen(SourceDir + "\VERSION")
  #if !VersionFile
    #error The bundle has no VERSION file: run packaging\build.py first or pass /DAppVersion=...
  #endif
  #define AppVersion Trim(FileRead(VersionFile))
  #expr FileClose(VersionFile)
#endif

#define AppName "OptRR"
#define AppExe "optrr-gui.exe"

[Setup]
AppId={{8C4F78EC-4210-4AF8-88B5-1959A7A113CE}
AppName={#AppName}
AppVersion={#AppVersion}
AppVerName={#AppName} {#AppVersion}
AppPublisher=OptRR developers
AppComments=Privacy-optimized randomized response for sharing categorical data, offline
VersionInfoVersion={#AppVersion}
VersionInfoProductName={#AppName}
; Per-user by default: {autopf} is %LOCALAPPDATA%\Programs when running without elevation.
PrivilegesRequired=lowest
PrivilegesRequiredOverridesAllowed=dialog
DefaultDirName={autopf}\{#AppName}
DefaultGroupName={#AppName}
DisableProgramGroupPage=yes
LicenseFile={#SourceDir}\LICENSE
SetupIconFile={#SourcePath}..\icons\optrr.ico
UninstallDisplayIcon={app}\{#AppExe}
UninstallDisplayName={#AppName} {#AppVersion}
OutputBaseFilename=OptRR-{#AppVersion}-setup
Compression=lzma2/max
SolidCompression=yes
WizardStyle=modern
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible
; The optional PATH entry is broadcast to running programs.
ChangesEnvironment=yes

[Languages]
Name: "english"; MessagesFile: "compiler:Default.isl"

[Tasks]
Name: "desktopicon"; Description: "{cm:CreateDesktopIcon}"; GroupDescription: "{cm:AdditionalIcons}"; Flags: unchecked
Name: "addtopath"; Description: "Add the optrr command to my PATH (current user)"; GroupDescription: "Command line:"; Flags: unchecked

[Files]
Source: "{#SourceDir}\*"; DestDir: "{app}"; Flags: ignoreversion recursesubdirs createallsubdirs

[Icons]
Name: "{autoprograms}\{#AppName}"; Filename: "{app}\{#AppExe}"; Comment: "Share categorical data under local differential privacy"
Name: "{autoprograms}\{#AppName} licences"; Filename: "{app}\THIRD_PARTY_LICENSES"
Name: "{autodesktop}\{#AppName}"; Filename: "{app}\{#AppExe}"; Tasks: desktopicon

[Registry]
; Per-user PATH entry (HKCU, no administrator rights), only if asked for and not already present.
Root: HKCU; Subkey: "Environment"; ValueType: expandsz; ValueName: "Path"; ValueData: "{olddata};{app}"; \
    Tasks: addtopath; Check: NeedsAddPath(ExpandConstant('{app}'))

[Run]
Filename: "{app}\{#AppExe}"; Description: "{cm:LaunchProgram,{#AppName}}"; Flags: nowait postinstall skipifsilent

[Code]
function NeedsAddPath(Dir: string): Boolean;
var
  Current: string;
begin
  if not RegQueryStringValue(HKEY_CURRENT_USER, 'Environment', 'Path', Current) then
  begin
    Result := True;
    exit;
  end;
  Result := Pos(';' + Uppercase(Dir) + ';', ';' + Uppercase(Current) + ';') = 0;
end;

procedure CurUninstallStepChanged(CurUninstallStep: TUninstallStep);
var
  Current, Dir: string;
  P: Integer;
begin
  { Remove the PATH entry added by the installer, if any. }
  if CurUninstallStep <> usPostUninstall then
    exit;
  if not RegQueryStringValue(HKEY_CURRENT_USER, 'Environment', 'Path', Current) then
    exit;
  Dir := ExpandConstant('{app}');
  P := Pos(';' + Uppercase(Dir), Uppercase(Current));
  if P > 0 then
  begin
    Delete(Current, P, Length(Dir) + 1);
    RegWriteExpandStringValue(HKEY_CURRENT_USER, 'Environment', 'Path', Current);
  end;
end;
