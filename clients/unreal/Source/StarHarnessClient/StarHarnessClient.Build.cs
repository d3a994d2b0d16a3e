using UnrealBuildTool;

public class StarHarnessClient : ModuleRules
{
    public StarHarnessClient(ReadOnlyTargetRules Target) : base(Target)
    {
        PCHUsage = PCHUsageMode.UseExplicitOrSharedPCHs;
        PublicDependencyModuleNames.AddRange(new string[] { "Core", "CoreUObject", "Engine" });
        // WebSockets: IWebSocket; Json + JsonUtilities: FJsonObject and FJsonObjectConverter.
        PrivateDependencyModuleNames.AddRange(new string[] { "WebSockets", "Json", "JsonUtilities" });
    }
}
